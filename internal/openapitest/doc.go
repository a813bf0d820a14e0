// Package openapitest checks HTTP answers against an OpenAPI 3.1 document
// (api/openapi.yaml), for tests: the api tests and the end-to-end tests pass
// every answer they get through Check, so a handler and the document cannot
// drift apart unnoticed. Validation is pb33f/libopenapi-validator's: status
// codes, content types, body schemas (additionalProperties: false included)
// and required response headers.
//
// Requests that match no operation are checked against the document's
// x-unmatched extension (the 404 and 405 answers of unknown routes).
//
// It takes the document as bytes and must not import api, so api's own
// tests can use it.
package openapitest
