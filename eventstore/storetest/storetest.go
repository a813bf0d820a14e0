package storetest

import (
	"testing"

	"github.com/payledger/payledger/eventstore"
)

// Run runs the conformance suite. newStore is called once per subtest, from
// that subtest; subtests run in parallel and name their streams uniquely, so
// newStore may return one store shared by all of them.
func Run(t *testing.T, newStore func(t *testing.T) eventstore.Store) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newStore(t))
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, s eventstore.Store)
}

func cases() []testCase {
	return []testCase{
		{"AppendToNewStream", testAppendToNewStream},
		{"ExpectedRevision", testExpectedRevision},
		{"BatchAtomicity", testBatchAtomicity},
		{"InvalidBatch", testInvalidBatch},
		{"Redelivery", testRedelivery},
		{"DuplicateStorm", testDuplicateStorm},
		{"ConcurrentDistinct", testConcurrentDistinct},
		{"ConcurrentBatches", testConcurrentBatches},
		{"ReadMissingStream", testReadMissingStream},
		{"ReadRoundTrip", testReadRoundTrip},
		{"SubscribeFromStart", testSubscribeFromStart},
		{"SubscribeFromPosition", testSubscribeFromPosition},
		{"ResumeFromCheckpoint", testResumeFromCheckpoint},
		{"SubscribeFilter", testSubscribeFilter},
		{"LiveDelivery", testLiveDelivery},
		{"NoSkip", testNoSkip},
	}
}
