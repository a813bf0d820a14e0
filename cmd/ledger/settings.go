package main

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// setting is one environment variable ledger reads: its name, and how its
// raw value ("" when unset) lands in Config. parse reports a bad value
// naming the variable; configFromEnv collects every such report.
type setting struct {
	name  string
	parse func(raw string) error
}

// text is a string setting, trimmed; def when unset or blank.
func text(name string, dst *string, def string) setting {
	return setting{name, func(raw string) error { *dst = or(raw, def); return nil }}
}

// list is a comma-separated setting.
func list(name string, dst *[]string) setting {
	return setting{name, func(raw string) error { *dst = splitList(raw); return nil }}
}

// duration is a setting of at least min, def when unset.
func duration(name string, dst *time.Duration, def, min time.Duration) setting {
	return setting{name, func(raw string) error {
		*dst = def
		if raw == "" {
			return nil
		}
		v, err := time.ParseDuration(raw)
		if err != nil || v < min {
			return fmt.Errorf("%s=%q: want a duration of at least %s such as 300s", name, raw, min)
		}
		*dst = v
		return nil
	}}
}

// integer is a setting from min to max, def when unset.
func integer(name string, dst *int, def, min, max int) setting {
	return setting{name, func(raw string) error {
		*dst = def
		if raw == "" {
			return nil
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < min || n > max {
			return fmt.Errorf("%s=%q: want an integer from %d to %d", name, raw, min, max)
		}
		*dst = n
		return nil
	}}
}

// httpURL is an optional http(s) URL setting, trimmed.
func httpURL(name string, dst *string) setting {
	return setting{name, func(raw string) error {
		*dst = strings.TrimSpace(raw)
		if *dst == "" {
			return nil
		}
		if u, err := url.Parse(*dst); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s=%q: want an http(s) URL", name, *dst)
		}
		return nil
	}}
}

// location is a time zone setting, def when unset.
func location(name string, dst **time.Location, def string) setting {
	return setting{name, func(raw string) error {
		loc, err := time.LoadLocation(or(raw, def))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		*dst = loc
		return nil
	}}
}

func or(v, def string) string {
	if v = strings.TrimSpace(v); v != "" {
		return v
	}
	return def
}

// splitList splits a comma-separated list, dropping blanks around items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
