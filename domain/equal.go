package domain

import "time"

// metaPtr gives generic code access to the Meta embedded in every event.
func (m *Meta) metaPtr() *Meta { return m }

// sameValue compares two events of one struct type by value. time.Time must
// be compared with Equal (== also compares the location pointer), so the
// timestamps are checked first and then cleared in the copies.
func sameValue[T comparable, P interface {
	*T
	metaPtr() *Meta
}](x P, other Event) bool {
	y, ok := other.(P)
	if !ok {
		return false
	}
	a, b := *x, *y
	ma, mb := P(&a).metaPtr(), P(&b).metaPtr()
	if !ma.OccurredAt.Equal(mb.OccurredAt) {
		return false
	}
	ma.OccurredAt, mb.OccurredAt = time.Time{}, time.Time{}
	return a == b
}

// derefEqual reports whether two events carry the same fact.
func derefEqual(a, b Event) bool {
	switch x := a.(type) {
	case *PaymentCreated:
		return sameValue(x, b)
	case *PaymentProcessing:
		return sameValue(x, b)
	case *PaymentActionRequired:
		return sameValue(x, b)
	case *PaymentAuthorized:
		return sameValue(x, b)
	case *PaymentFailed:
		return sameValue(x, b)
	case *PaymentCancelled:
		return sameValue(x, b)
	case *PaymentSucceeded:
		return sameValue(x, b)
	case *PaymentRefunded:
		return sameValue(x, b)
	case *DisputeOpened:
		return sameValue(x, b)
	case *DisputeClosed:
		return sameValue(x, b)
	case *PaymentNotified:
		return sameValue(x, b)
	case *PaymentStatusObserved:
		return sameValue(x, b)
	case *FeeAssessed:
		return sameValue(x, b)
	case *InquiryOpened:
		return sameValue(x, b)
	case *ReconciliationChecked:
		return sameValue(x, b)
	case *ReviewOpened:
		return sameReview(x, b)
	case *ReviewResolved:
		return sameValue(x, b)
	}
	return false
}

// sameReview is sameValue for ReviewOpened, whose Deadline is a time too.
func sameReview(x *ReviewOpened, other Event) bool {
	y, ok := other.(*ReviewOpened)
	if !ok || !x.Deadline.Equal(y.Deadline) {
		return false
	}
	a, b := *x, *y
	a.Deadline, b.Deadline = time.Time{}, time.Time{}
	return sameValue(&a, &b)
}
