package domain

// Notification is what a provider adapter makes of one verified webhook
// delivery: the provider's event identity and the domain events it implies.
// No events means the delivery is valid but of a type payledger does not track
// ("ignored"); IgnoredReason says why.
type Notification struct {
	Provider          string
	ProviderEventID   string
	ProviderEventType string
	Events            []Event
	IgnoredReason     string
	// SignatureHeader is the authenticating header as received, kept with
	// the events so an auditor can re-verify the delivery.
	SignatureHeader string
}
