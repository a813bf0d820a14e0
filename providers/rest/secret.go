package rest

import (
	"fmt"
	"strings"
)

// CheckSecret rejects a missing credential, and one with leading or
// trailing whitespace (a copied key with a newline authenticates nowhere,
// and would only fail at the first fetch). The error names what is wrong,
// never the value.
func CheckSecret(what, value string) error {
	switch {
	case value == "":
		return fmt.Errorf("no %s configured", what)
	case strings.TrimSpace(value) != value:
		return fmt.Errorf("%s has leading or trailing whitespace", what)
	}
	return nil
}
