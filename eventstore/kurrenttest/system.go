package kurrenttest

import (
	"fmt"

	"github.com/google/uuid"
)

// epochStream holds one event per leader epoch. Real nodes write it at every
// election (so at every start of a single node); the default $all filter
// hides it from filtered subscriptions but not from reads.
const epochStream = "$epoch-information"

// writeEpoch records a new epoch led by leader.
func (st *store) writeEpoch(leader uuid.UUID) {
	st.mu.Lock()
	defer st.mu.Unlock()
	number := st.lastNumber(epochStream) + 1
	prev := int64(-1)
	if number > 0 {
		prev = st.event(epochStream, number-1).pos
	}
	data := fmt.Sprintf(`{"epochNumber":%d,"epochPosition":%d,"epochId":%q,"prevEpochPosition":%d,"leaderInstanceId":%q}`,
		number, st.next, uuid.NewString(), prev, leader.String())
	st.commit(epochStream, number, proposed{
		id: uuid.New(), typ: epochStream, json: true, data: []byte(data), system: true,
	})
	st.notify()
}
