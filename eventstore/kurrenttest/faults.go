package kurrenttest

import (
	"context"
	"strings"
	"sync"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/gossip"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/serverfeatures"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// RPC names a gRPC method of the server, for fault injection.
type RPC string

// The methods the server implements.
const (
	RPCAppend    RPC = streams.Streams_Append_FullMethodName
	RPCRead      RPC = streams.Streams_Read_FullMethodName // reads and subscriptions
	RPCDelete    RPC = streams.Streams_Delete_FullMethodName
	RPCTombstone RPC = streams.Streams_Tombstone_FullMethodName
	RPCFeatures  RPC = serverfeatures.ServerFeatures_GetSupportedMethods_FullMethodName
	RPCGossip    RPC = gossip.Gossip_Read_FullMethodName
)

// Fault is a one-shot misbehaviour of one call. Faults on Append act once
// the whole request has been read, as the real server only answers then;
// this also keeps the client from seeing a half-sent request as an
// unclassified io.EOF.
type Fault int

const (
	// FaultUnavailable refuses the call with codes.Unavailable ("Server Is
	// Not Ready") without doing anything.
	FaultUnavailable Fault = iota + 1
	// FaultDropConnection closes the caller's connection without doing
	// anything; every call on that connection fails with Unavailable.
	FaultDropConnection
	// FaultLoseReply does the work (an append or delete is committed), then
	// closes the connection instead of answering: the lost acknowledgement
	// that makes a client retry a write that succeeded. On Read it drops the
	// connection at the first message.
	FaultLoseReply
	// FaultHang does the work, then never answers; the call ends at the
	// client's deadline (DeadlineExceeded) or cancellation. This is also
	// what the server's IdempotentNotReady path looks like to a client.
	FaultHang
)

// errDropped is what the handler returns after dropping the connection;
// the client never sees it.
var errDropped = status.Error(codes.Unavailable, "kurrenttest: connection dropped")

// faults holds the runtime fault switches.
type faults struct {
	mu          sync.Mutex
	unavailable bool
	queue       map[RPC][]Fault
}

// next returns the fault the next call of rpc suffers, if any.
func (f *faults) next(rpc RPC) Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	if q := f.queue[rpc]; len(q) > 0 {
		f.queue[rpc] = q[1:]
		return q[0]
	}
	if f.unavailable && strings.HasPrefix(string(rpc), "/event_store.client.streams.") {
		return FaultUnavailable
	}
	return 0
}

// SetUnavailable makes every Streams call (append, read, subscribe, delete)
// fail with codes.Unavailable while on, as a node that is not ready or too
// busy answers. ServerFeatures and Gossip keep answering, as on the real
// server, so the client's rediscovery succeeds and it recovers as soon as
// this is switched off. Live subscriptions are not touched: call
// DropConnections as well to cut them. For a node that is down (connections
// refused, rediscovery failing), use Stop.
func (s *Server) SetUnavailable(on bool) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.unavailable = on
}

// InjectFault queues f for the next call of rpc. Faults queued for the same
// RPC apply to successive calls, in order; a queued fault takes precedence
// over SetUnavailable.
func (s *Server) InjectFault(rpc RPC, f Fault) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.queue[rpc] = append(s.faults.queue[rpc], f)
}

func (s *Server) unaryFaults(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	switch s.faults.next(RPC(info.FullMethod)) {
	case FaultUnavailable:
		return nil, errNotReady
	case FaultDropConnection:
		s.dropPeer(ctx)
		return nil, errDropped
	case FaultLoseReply:
		_, _ = handler(ctx, req)
		s.dropPeer(ctx)
		return nil, errDropped
	case FaultHang:
		_, _ = handler(ctx, req)
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return handler(ctx, req)
}

func (s *Server) streamFaults(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	f := s.faults.next(RPC(info.FullMethod))
	if f == 0 {
		return handler(srv, ss)
	}
	switch f {
	case FaultUnavailable, FaultDropConnection:
		if info.IsClientStream {
			drain(ss)
		}
		if f == FaultUnavailable {
			return errNotReady
		}
		s.dropPeer(ss.Context())
		return errDropped
	}
	return handler(srv, &faultyStream{ServerStream: ss, fault: f, s: s})
}

// drain reads the rest of a client stream.
func drain(ss grpc.ServerStream) {
	for ss.RecvMsg(&shared.Empty{}) == nil {
	}
}

// faultyStream replaces the first reply with the fault.
type faultyStream struct {
	grpc.ServerStream
	fault Fault
	s     *Server
}

func (w *faultyStream) SendMsg(m any) error {
	switch w.fault {
	case FaultLoseReply:
		w.s.dropPeer(w.Context())
		return errDropped
	case FaultHang:
		<-w.Context().Done()
		return status.FromContextError(w.Context().Err()).Err()
	}
	return w.ServerStream.SendMsg(m)
}

// dropPeer closes the connection the call in ctx arrived on.
func (s *Server) dropPeer(ctx context.Context) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return
	}
	s.mu.Lock()
	lis := s.lis
	s.mu.Unlock()
	if lis != nil {
		lis.drop(p.Addr.String())
	}
}

// DropConnections closes every client connection at once, as a network
// failure or a server crash would: calls in flight and live subscriptions
// fail with codes.Unavailable, and the client reconnects on its next call.
// It returns how many connections it closed.
func (s *Server) DropConnections() int {
	s.mu.Lock()
	lis := s.lis
	s.mu.Unlock()
	if lis == nil {
		return 0
	}
	return lis.dropAll()
}
