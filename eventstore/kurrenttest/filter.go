package kurrenttest

import (
	"regexp"
	"strings"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
)

// readBatchSize is the server's page size for reads and catch-up
// (Enumerator.ReadBatchSize), and the default filter search window.
const readBatchSize = 32

// eventFilter is a server-side $all filter on the stream name or the event
// type, by prefixes or by an unanchored regular expression. A nil filter
// passes everything.
type eventFilter struct {
	onType   bool
	prefixes []string
	re       *regexp.Regexp
	window   int // records considered per catch-up page
	interval int // checkpoint interval: multiplier × window
}

func newFilter(o *streams.ReadReq_Options_FilterOptions) (*eventFilter, error) {
	f := &eventFilter{window: readBatchSize}
	expr := o.GetStreamIdentifier()
	if e := o.GetEventType(); e != nil {
		f.onType, expr = true, e
	}
	if expr == nil {
		return nil, errInvalid("filter needs a stream identifier or event type expression")
	}
	if expr.GetRegex() != "" {
		re, err := regexp.Compile(expr.GetRegex())
		if err != nil {
			return nil, errInvalid("filter regex: %v", err)
		}
		f.re = re
	} else {
		f.prefixes = expr.GetPrefix()
	}
	if w, ok := o.GetWindow().(*streams.ReadReq_Options_FilterOptions_Max); ok {
		f.window = int(w.Max)
	}
	if f.window == 0 || o.GetCheckpointIntervalMultiplier() == 0 {
		return nil, errHandler("checkpointIntervalMultiplier and the search window must be positive")
	}
	f.interval = int(o.GetCheckpointIntervalMultiplier()) * f.window
	return f, nil
}

// allows applies the filter ANDed with the default $all rule.
func (f *eventFilter) allows(r *record) bool {
	if f == nil {
		return true
	}
	if !defaultAllows(r) {
		return false
	}
	subject := r.stream
	if f.onType {
		subject = r.typ
	}
	if f.re != nil {
		return f.re.MatchString(subject)
	}
	if len(f.prefixes) == 0 {
		return true
	}
	for _, p := range f.prefixes {
		if strings.HasPrefix(subject, p) {
			return true
		}
	}
	return false
}

// defaultAllows is the server's DefaultAllFilter: it hides the epoch stream
// and the checkpoint and parked streams of persistent subscriptions to $all.
// It applies to filtered $all subscriptions and to the live part of
// unfiltered ones (catch-up of an unfiltered one shows everything).
func defaultAllows(r *record) bool {
	if r.stream == epochStream {
		return false
	}
	rest, ok := strings.CutPrefix(r.stream, "$persistentsubscription-$all::")
	return !ok || !strings.HasSuffix(rest, "-checkpoint") && !strings.HasSuffix(rest, "-parked")
}
