// Package lag measures end-to-end lag: from sending a webhook the ledger
// answered "accepted" to GET /v1/payments/{provider}/{id} showing it.
//
// The test cannot be satisfied early. The events endpoint (which reads the
// event store) gives the revision r the acknowledged event was stored at
// (the acknowledgement names the event), and the payment is visible once
// the read model's event_count reaches r+1: the read model holds a prefix of
// the stream, so events other than ours (Mercado Pago's status observations)
// cannot make it so before ours is applied. Counting webhooks sent would not.
//
// Measuring must not become the load: deliveries are sampled on a clock (at
// most --lag-samples a second, whatever the ledger's state), all reads are
// paced to --lag-reads a second, and a sample is read every --lag-interval.
// Its lag is the middle of the interval the change must have happened in
// (after the send and the start of the last read not showing it, before the
// end of the first read that did); half that interval is its resolution.
//
// It imports truth, readapi, deliver (the Delivery it samples), verdict (the
// Report it fills) and internal/backoff only.
package lag
