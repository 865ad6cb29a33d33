package locale

import "testing"

func TestNormalize(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"LANG": "C.UTF-8"}, true},
		{map[string]string{"LANG": "POSIX"}, true},
		{map[string]string{"LC_ALL": "C", "LANG": "de_DE.UTF-8"}, true},
		{map[string]string{"LANG": "en_US.UTF-8"}, false},
		{map[string]string{"LANG": "C.UTF-8", "LANGUAGE": "fr"}, false},
		{map[string]string{"LC_ALL": "de_DE.UTF-8", "LANG": "C"}, false},
		{map[string]string{}, false},
	}
	for _, c := range cases {
		set := map[string]string{}
		got := Normalize(func(k string) string { return c.env[k] }, func(k, v string) error { set[k] = v; return nil })
		if got != c.want || (got && set["LANGUAGE"] != "en") {
			t.Errorf("%v: Normalize = %v (set %v), want %v", c.env, got, set, c.want)
		}
	}
}
