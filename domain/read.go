package domain

// Read-side value types shared by the API and the projections, so neither
// imports the other.

// PaymentFilter selects payments for a list query.
type PaymentFilter struct {
	Provider string // empty: any
	Status   Status // empty: any
	Limit    int    // 1..MaxPageSize; 0 means DefaultPageSize
	Cursor   string // opaque, from a previous page's NextCursor; empty: first page
}

// Page sizes of payment lists.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// PaymentPage is one page of a payment list. NextCursor is empty on the last page.
type PaymentPage struct {
	Payments   []PaymentState
	NextCursor string
}
