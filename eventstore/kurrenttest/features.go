package kurrenttest

import (
	"context"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/gossip"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/serverfeatures"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	"github.com/google/uuid"
)

// Version is the server version the fake reports. The client requires three
// numeric parts; the behaviour emulated is that of this release.
const Version = "24.10.14"

// featuresService implements ServerFeatures.GetSupportedMethods, which the
// client calls once per (re)discovery.
type featuresService struct {
	serverfeatures.UnimplementedServerFeaturesServer
}

// GetSupportedMethods lists the methods this fake implements, lower-cased
// as the real server does. Batch append and persistent subscriptions are
// left out, so the client never sets their feature flags.
func (featuresService) GetSupportedMethods(context.Context, *shared.Empty) (*serverfeatures.SupportedMethods, error) {
	const (
		streamsSvc = "event_store.client.streams.streams"
		gossipSvc  = "event_store.client.gossip.gossip"
		featureSvc = "event_store.client.server_features.serverfeatures"
	)
	return &serverfeatures.SupportedMethods{
		EventStoreServerVersion: Version,
		Methods: []*serverfeatures.SupportedMethod{
			{ServiceName: streamsSvc, MethodName: "read", Features: []string{"position", "events"}},
			{ServiceName: streamsSvc, MethodName: "append"},
			{ServiceName: streamsSvc, MethodName: "delete"},
			{ServiceName: streamsSvc, MethodName: "tombstone"},
			{ServiceName: gossipSvc, MethodName: "read"},
			{ServiceName: featureSvc, MethodName: "getsupportedmethods"},
		},
	}, nil
}

// gossipService answers Gossip.Read with a one-node cluster whose only
// member is this server, alive and leader, so cluster-mode connection
// strings (several hosts, esdb+discover) also work.
type gossipService struct {
	gossip.UnimplementedGossipServer
	instance uuid.UUID
	host     string
	port     uint32
	now      func() time.Time
}

// Read implements Gossip.Read.
func (g *gossipService) Read(context.Context, *shared.Empty) (*gossip.ClusterInfo, error) {
	return &gossip.ClusterInfo{Members: []*gossip.MemberInfo{{
		InstanceId:   wireUUID(g.instance, false),
		TimeStamp:    ticks(g.now()),
		State:        gossip.MemberInfo_Leader,
		IsAlive:      true,
		HttpEndPoint: &gossip.EndPoint{Address: g.host, Port: g.port},
	}}}, nil
}
