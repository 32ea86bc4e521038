package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseTimeLimit reads a time limit the way Slurm's --time does, or as a
// Go duration: "2h", "90m", "1h30m", "45s"; "MM" (minutes), "MM:SS",
// "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS". It returns whole seconds,
// at least one.
func parseTimeLimit(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty")
	}
	if strings.ContainsAny(s, "hms") && !strings.ContainsAny(s, ":-") {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, errors.New("want a duration like 2h or 90m, or Slurm's [D-]HH:MM:SS")
		}
		if d%time.Second != 0 || d < time.Second {
			return 0, errors.New("want whole seconds, at least 1s")
		}
		return int(d / time.Second), nil
	}
	secs, err := slurmTime(s)
	if err != nil {
		return 0, err
	}
	if secs < 1 {
		return 0, errors.New("want at least one second")
	}
	return secs, nil
}

// slurmTime reads Slurm's time formats.
func slurmTime(s string) (int, error) {
	bad := fmt.Errorf("%q: want a duration like 2h or 90m, or Slurm's MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS", s)
	days := 0
	rest := s
	if d, r, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, bad
		}
		days, rest = n, r
	}
	parts := strings.Split(rest, ":")
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, bad
		}
		nums[i] = n
	}
	var h, m, sec int
	switch {
	case days > 0 || strings.Contains(s, "-"):
		// D-HH, D-HH:MM, D-HH:MM:SS
		if len(nums) > 3 {
			return 0, bad
		}
		h = nums[0]
		if len(nums) > 1 {
			m = nums[1]
		}
		if len(nums) > 2 {
			sec = nums[2]
		}
	case len(nums) == 1:
		m = nums[0]
	case len(nums) == 2:
		m, sec = nums[0], nums[1]
	case len(nums) == 3:
		h, m, sec = nums[0], nums[1], nums[2]
	default:
		return 0, bad
	}
	total := ((days*24+h)*60+m)*60 + sec
	if total > 1<<40 {
		return 0, bad
	}
	return total, nil
}
