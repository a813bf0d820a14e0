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

// onOff is a switch: "on" or "off" (any case), def when unset.
func onOff(name string, dst *bool, def bool) setting {
	return setting{name, func(raw string) error {
		switch strings.ToLower(strings.TrimSpace(raw)) {
		case "":
			*dst = def
		case "on":
			*dst = true
		case "off":
			*dst = false
		default:
			return fmt.Errorf("%s=%q: want on or off", name, raw)
		}
		return nil
	}}
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

// durationOrOff is duration, with "0" (or "0s") switching the feature off.
func durationOrOff(name string, dst *time.Duration, def, min time.Duration) setting {
	on := duration(name, dst, def, min)
	return setting{name, func(raw string) error {
		raw = strings.TrimSpace(raw)
		if v, err := time.ParseDuration(raw); err == nil && v == 0 {
			*dst = 0
			return nil
		}
		if err := on.parse(raw); err != nil {
			return fmt.Errorf("%w, or 0 to switch it off", err)
		}
		return nil
	}}
}

// fraction is a share in [0, 1], def when unset.
func fraction(name string, dst *float64, def float64) setting {
	return setting{name, func(raw string) error {
		*dst = def
		if raw = strings.TrimSpace(raw); raw == "" {
			return nil
		}
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return fmt.Errorf("%s=%q: want a share from 0 to 1 such as 0.01", name, raw)
		}
		*dst = v
		return nil
	}}
}

// positive is a number above 0 and at most max, def when unset.
func positive(name string, dst *float64, def, max float64) setting {
	return setting{name, func(raw string) error {
		*dst = def
		if raw = strings.TrimSpace(raw); raw == "" {
			return nil
		}
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil || !(v > 0 && v <= max) {
			return fmt.Errorf("%s=%q: want a number above 0 and at most %g such as 5", name, raw, max)
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
