package projections

import (
	"strconv"
	"strings"
)

// filter builds a list query's WHERE clause with numbered arguments; the
// keyset lists (payments, checks, reviews, dead letters) share it.
type filter struct {
	conds []string
	args  []any
}

// arg adds v as the next argument and returns its placeholder ($n).
func (f *filter) arg(v any) string {
	f.args = append(f.args, v)
	return "$" + strconv.Itoa(len(f.args))
}

// where adds a condition.
func (f *filter) where(cond string) { f.conds = append(f.conds, cond) }

// equal adds col = v, unless v is empty (which matches anything).
func (f *filter) equal(col, v string) {
	if v != "" {
		f.where(col + " = " + f.arg(v))
	}
}

// sql is " WHERE c1 AND c2 ...", or "" without conditions.
func (f *filter) sql() string {
	if len(f.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(f.conds, " AND ")
}

// trimPage cuts the limit+1 rows a keyset query asked for to a page: a
// row beyond limit means there is a next page, which continues after the
// page's last row (cursor of it); "" on the last page.
func trimPage[T any](list []T, limit int, cursor func(T) string) ([]T, string) {
	if len(list) <= limit {
		return list, ""
	}
	list = list[:limit]
	return list, cursor(list[limit-1])
}
