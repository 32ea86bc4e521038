package cli

import "testing"

func TestParseTimeLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"2h", 7200}, {"90m", 5400}, {"1h30m", 5400}, {"45s", 45},
		{"30", 1800}, {"5:30", 330}, {"1:02:03", 3723}, {"2-00", 172800}, {"1-02:30", 95400}, {"1-00:00:10", 86410},
	} {
		got, err := parseTimeLimit(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseTimeLimit(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0", "0s", "1.5s", "abc", "1:2:3:4", "-5", "x-1", "2h-1", "1-2:3:4:5", "500ms", "1:-2"} {
		if got, err := parseTimeLimit(bad); err == nil {
			t.Errorf("parseTimeLimit(%q) = %d, want an error", bad, got)
		}
	}
}
