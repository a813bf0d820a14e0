package kurrenttest

import (
	"context"
	"fmt"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The errors below copy the real server's status codes, messages and
// trailers (RpcExceptions.cs, Constants.cs): the Go client classifies errors
// by the "exception" trailer first and the status code second.

// errStreamDeleted: the stream is tombstoned. The client needs the
// stream-name trailer or it panics.
func errStreamDeleted(ctx context.Context, name string) error {
	_ = grpc.SetTrailer(ctx, metadata.Pairs("exception", "stream-deleted", "stream-name", name))
	return status.Errorf(codes.FailedPrecondition, "Event stream '%s' is deleted.", name)
}

// errDeleteWrongVersion: Delete and Tombstone report a failed expected
// revision as an error, unlike Append.
func errDeleteWrongVersion(ctx context.Context, name string, exp, actual int64) error {
	_ = grpc.SetTrailer(ctx, metadata.Pairs(
		"exception", "wrong-expected-version",
		"stream-name", name,
		"expected-version", strconv.FormatInt(exp, 10),
		"actual-version", strconv.FormatInt(actual, 10),
	))
	return status.Errorf(codes.FailedPrecondition,
		"Delete failed due to WrongExpectedVersion. Stream: %s, Expected version: %d, Actual version: %d", name, exp, actual)
}

func errMissingMetadata(ctx context.Context, key string) error {
	_ = grpc.SetTrailer(ctx, metadata.Pairs(
		"exception", "missing-required-metadata-property",
		"required-metadata-properties", "type,content-type",
	))
	return status.Errorf(codes.InvalidArgument, "Required Metadata Property '%s' is missing", key)
}

func errAppendTooLarge(ctx context.Context, limit int) error {
	_ = grpc.SetTrailer(ctx, metadata.Pairs(
		"exception", "maximum-append-size-exceeded",
		"maximum-append-size", strconv.Itoa(limit),
	))
	return status.Errorf(codes.InvalidArgument, "Maximum Append Size of %d Exceeded.", limit)
}

// errNotReady is what a node that is starting, shutting down or too busy
// answers (RpcExceptions.ServerNotReady).
var errNotReady = status.Error(codes.Unavailable, "Server Is Not Ready")

// errEmptyStream: the server's message constructors throw on an empty
// stream name.
var errEmptyStream = errHandler("stream name is empty")

func errInvalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// errHandler is what ASP.NET gRPC answers when a handler throws an
// unexpected exception.
func errHandler(format string, args ...any) error {
	return status.Error(codes.Unknown, "Exception was thrown by handler. "+fmt.Sprintf(format, args...))
}
