package openapitest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
)

// unmatchedKey is the document's extension describing answers to requests
// that match no operation: "unknown-path" and "unknown-method", each a
// Responses object of $refs into components/responses.
const unmatchedKey = "x-unmatched"

// Validator checks answers against one OpenAPI document. It is safe for
// concurrent use.
type Validator struct {
	mu         sync.Mutex // the library's caches are not documented as safe for concurrent use
	v          validator.Validator
	unmatched  map[string]*v3.PathItem // by x-unmatched kind
	operations []string                // "METHOD /path"
}

// New parses doc, checks it against the OpenAPI schema and returns a
// Validator for it.
func New(doc []byte) (*Validator, error) {
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("openapitest: parse: %w", err)
	}
	// Formats (date-time, uuid) are asserted too: a time in the wrong shape
	// breaks clients as surely as a missing field.
	v, errs := validator.NewValidator(d, config.WithFormatAssertions(), config.WithContentAssertions())
	if len(errs) > 0 {
		return nil, fmt.Errorf("openapitest: build validator: %w", errors.Join(errs...))
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		return nil, fmt.Errorf("openapitest: the document is not valid OpenAPI: %w", joinErrors(verrs))
	}
	model, err := d.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("openapitest: build model: %w", err)
	}
	unmatched, err := unmatchedOperations(&model.Model)
	if err != nil {
		return nil, err
	}
	return &Validator{v: v, unmatched: unmatched, operations: operations(&model.Model)}, nil
}

func operations(model *v3.Document) []string {
	var out []string
	for path, item := range model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	return out
}

// Check validates one answer to req: its status must be documented for the
// operation, its Content-Type must be one the document lists for that status,
// its body must match the schema and its documented required headers must be
// present. A request that matches no operation is checked against the
// document's x-unmatched answers.
func (v *Validator) Check(req *http.Request, status int, header http.Header, body []byte) error {
	resp := &http.Response{StatusCode: status, Header: header, Request: req,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
	v.mu.Lock()
	defer v.mu.Unlock()
	var ok bool
	var errs []*verrors.ValidationError
	if kind := unmatchedKind(req, nil); kind != "" {
		ok, errs = v.checkUnmatched(req, resp, kind)
	} else if ok, errs = v.v.ValidateHttpResponse(req, resp); !ok {
		if kind := unmatchedKind(req, errs); kind != "" {
			resp.Body = io.NopCloser(bytes.NewReader(body))
			ok, errs = v.checkUnmatched(req, resp, kind)
		}
	}
	if ok {
		return nil
	}
	return fmt.Errorf("%s %s → %d does not match the OpenAPI document: %w", req.Method, req.URL.Path, status, joinErrors(errs))
}

func (v *Validator) checkUnmatched(req *http.Request, resp *http.Response, kind string) (bool, []*verrors.ValidationError) {
	return v.v.GetResponseBodyValidator().ValidateResponseBodyWithPathItem(req, resp, v.unmatched[kind], unmatchedKey+" "+kind)
}

// unmatchedKind says which x-unmatched entry applies to req: a path that is
// not in clean form (the router redirects it before matching), or, when errs
// reports that the request matched no operation, an unknown path or method.
// It is "" when none applies.
func unmatchedKind(req *http.Request, errs []*verrors.ValidationError) string {
	if p := req.URL.Path; p == "" || p != cleanPath(p) {
		return "non-canonical-path"
	}
	if len(errs) != 1 || errs[0].ValidationType != helpers.PathValidation {
		return ""
	}
	switch errs[0].ValidationSubType {
	case helpers.ValidationMissing:
		return "unknown-path"
	case helpers.ValidationMissingOperation:
		return "unknown-method"
	}
	return ""
}

// cleanPath is gorilla/mux's: path.Clean, keeping a trailing slash.
func cleanPath(p string) string {
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// unmatchedOperations turns the x-unmatched extension into one path item per
// kind whose every method has those responses, so the library checks them
// the way it checks documented operations.
func unmatchedOperations(model *v3.Document) (map[string]*v3.PathItem, error) {
	node, ok := model.Extensions.Get(unmatchedKey)
	if !ok {
		return nil, fmt.Errorf("openapitest: the document has no %s extension", unmatchedKey)
	}
	var refs map[string]map[string]struct {
		Ref string `yaml:"$ref"`
	}
	if err := node.Decode(&refs); err != nil {
		return nil, fmt.Errorf("openapitest: decode %s: %w", unmatchedKey, err)
	}
	out := make(map[string]*v3.PathItem, len(refs))
	for _, kind := range []string{"non-canonical-path", "unknown-path", "unknown-method"} {
		codes := orderedmap.New[string, *v3.Response]()
		for code, r := range refs[kind] {
			name, ok := strings.CutPrefix(r.Ref, "#/components/responses/")
			resp := model.Components.Responses.GetOrZero(name)
			if !ok || resp == nil {
				return nil, fmt.Errorf("openapitest: %s %s %s: %q is not a component response", unmatchedKey, kind, code, r.Ref)
			}
			codes.Set(code, resp)
		}
		if codes.Len() == 0 {
			return nil, fmt.Errorf("openapitest: %s has no %s answers", unmatchedKey, kind)
		}
		op := &v3.Operation{Responses: &v3.Responses{Codes: codes}}
		out[kind] = &v3.PathItem{Get: op, Head: op, Post: op, Put: op, Patch: op, Delete: op, Options: op, Trace: op}
	}
	return out, nil
}

// joinErrors renders the library's findings, schema failures included, one
// per line.
func joinErrors(errs []*verrors.ValidationError) error {
	var out []error
	for _, e := range errs {
		msg := e.Message
		if e.Reason != "" {
			msg += ": " + e.Reason
		}
		for _, f := range e.SchemaValidationErrors {
			loc := f.FieldPath
			if loc == "" {
				loc = f.KeywordLocation
			}
			msg += fmt.Sprintf("\n\t%s: %s", loc, f.Reason)
		}
		out = append(out, errors.New(msg))
	}
	return errors.Join(out...)
}

// Operations lists the document's operations as "METHOD /path", in the
// document's order.
func (v *Validator) Operations() []string { return slices.Clone(v.operations) }
