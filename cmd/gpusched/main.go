// Command gpusched is the GPU cluster scheduler: run `gpusched --help`.
package main

import (
	"os"

	"github.com/gpusched/gpusched/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], os.Stdout, os.Stderr))
}
