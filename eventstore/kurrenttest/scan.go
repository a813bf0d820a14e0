package kurrenttest

import "sort"

// scan reads one catch-up page, as AllReader does: from the first record at
// or after from, it considers records until maxCount of them matched or
// window were considered. next is where the following page starts; end
// reports that the page ran out of log. Call with mu held.
func (st *store) scan(from tfpos, maxCount, window int, match func(*record) bool) (page []*record, next tfpos, considered int, end bool) {
	i := sort.Search(len(st.log), func(i int) bool { return !st.log[i].position().less(from) })
	next = from
	for len(page) < maxCount && considered < window {
		if i >= len(st.log) {
			return page, next, considered, true
		}
		rec := st.log[i]
		i++
		considered++
		if match(rec) {
			page = append(page, rec)
		}
		next = tfpos{rec.end, 0}
	}
	return page, next, considered, false
}

func collectForward(log []*record, from func(*record) bool, f *eventFilter, n int) []*record {
	var page []*record
	for _, rec := range log {
		if len(page) >= n {
			break
		}
		if from(rec) && f.allows(rec) {
			page = append(page, rec)
		}
	}
	return page
}

func collectBackward(log []*record, from func(*record) bool, f *eventFilter, n int) []*record {
	var page []*record
	for i := len(log) - 1; i >= 0 && len(page) < n; i-- {
		if from(log[i]) && f.allows(log[i]) {
			page = append(page, log[i])
		}
	}
	return page
}
