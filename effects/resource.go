package effects

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// resource is what a POST path of the provider's API names:
// /v1/<name> creates an object, /v1/<name>/<id> updates one,
// /v1/<name>/<id>/<action> acts on one (confirm, capture, cancel).
type resource struct {
	name, object, prefix string
	id, action           string
	kind                 resourceKind
}

type resourceKind struct {
	object, prefix, status string
	needs                  []string // one of these must be present on create
}

// knownResources are the resources whose objects the fake shapes as Stripe
// does; any other /v1/<name> is served with the object named after it.
var knownResources = map[string]resourceKind{
	"payouts":         {object: "payout", prefix: "po", status: "paid", needs: []string{"amount"}},
	"refunds":         {object: "refund", prefix: "re", status: "succeeded", needs: []string{"charge", "payment_intent"}},
	"charges":         {object: "charge", prefix: "ch", status: "succeeded", needs: []string{"amount"}},
	"payment_intents": {object: "payment_intent", prefix: "pi", status: "requires_payment_method", needs: []string{"amount"}},
	"transfers":       {object: "transfer", prefix: "tr", needs: []string{"amount"}},
	"customers":       {object: "customer", prefix: "cus"},
	"invoices":        {object: "invoice", prefix: "in", status: "draft"},
	"subscriptions":   {object: "subscription", prefix: "sub", status: "active"},
}

var resourcePath = regexp.MustCompile(`^/v1/([a-z_]+)(?:/([A-Za-z0-9_]+)(?:/([a-z_]+))?)?$`)

// resourceOf parses a POST path of the provider's API.
func resourceOf(path string) (resource, bool) {
	m := resourcePath.FindStringSubmatch(path)
	if m == nil {
		return resource{}, false
	}
	k, ok := knownResources[m[1]]
	if !ok {
		obj := strings.TrimSuffix(m[1], "s")
		k = resourceKind{object: obj, prefix: strings.ReplaceAll(obj, "_", "")}
		if len(k.prefix) > 3 {
			k.prefix = k.prefix[:3]
		}
	}
	return resource{name: m[1], object: k.object, prefix: k.prefix, id: m[2], action: m[3], kind: k}, true
}

// status is the "status" of the object after the request ("" for none).
func (r resource) status() any {
	switch r.action {
	case "confirm", "capture", "pay":
		return "succeeded"
	case "cancel":
		return "canceled"
	}
	if r.object == "payment_intent" && r.id == "" {
		return "requires_payment_method"
	}
	if r.kind.status == "" {
		return nil
	}
	return r.kind.status
}

// validate checks a create request's required parameters and any "amount";
// it returns the parameter at fault.
func (r resource) validate(fields map[string]any) (string, error) {
	if r.id == "" && len(r.kind.needs) > 0 {
		found := false
		for _, n := range r.kind.needs {
			if _, ok := fields[n]; ok {
				found = true
			}
		}
		if !found {
			if len(r.kind.needs) == 1 && r.kind.needs[0] == "amount" {
				return "amount", fmt.Errorf("amount: required, a positive integer")
			}
			return r.kind.needs[0], fmt.Errorf("Missing required param: one of %s", strings.Join(r.kind.needs, ", "))
		}
	}
	if v, ok := fields["amount"]; ok {
		n, isNum := v.(json.Number)
		if !isNum {
			return "amount", fmt.Errorf("amount: %v is not a positive integer", v)
		}
		if i, err := n.Int64(); err != nil || i <= 0 {
			return "amount", fmt.Errorf("amount: %s is not a positive integer", n)
		}
	}
	return "", nil
}

// canonicalBody parses a request body, JSON (the default) or form-encoded
// (Content-Type application/x-www-form-urlencoded, as Stripe's own clients
// send it), into its fields and renders them as canonical JSON: sorted keys,
// no spaces, numbers kept as written. Form values become JSON the way
// Stripe reads them: a[b]=1 nests, a[]=x and a[0]=x make lists, integers
// and true/false become numbers and booleans (except under "metadata",
// whose values are strings). So the same parameters sent as JSON or as a
// form are the same request.
func canonicalBody(contentType string, raw []byte) (map[string]any, string, error) {
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/x-www-form-urlencoded" {
		fields, err := formFields(string(raw))
		if err != nil {
			return nil, "", err
		}
		b, err := json.Marshal(fields)
		if err != nil {
			return nil, "", err
		}
		return fields, string(b), nil
	}
	return canonicalJSON(raw)
}

// canonicalJSON parses a JSON object and renders it with sorted keys and no
// spaces, numbers kept as written.
func canonicalJSON(raw []byte) (map[string]any, string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var fields map[string]any
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return nil, "", fmt.Errorf("the body must be a JSON object (or a form, with Content-Type application/x-www-form-urlencoded)")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, "", fmt.Errorf("the body must be one JSON object")
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, "", err
	}
	return fields, string(b), nil
}

var integer = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,17})$`)

// formFields decodes a Stripe-style form into nested fields.
func formFields(body string) (map[string]any, error) {
	vals, err := url.ParseQuery(body)
	if err != nil {
		return nil, fmt.Errorf("the form body does not parse: %v", err)
	}
	names := make([]string, 0, len(vals))
	for k := range vals {
		names = append(names, k)
	}
	sort.Strings(names)
	root := map[string]any{}
	for _, name := range names {
		path, err := formPath(name)
		if err != nil {
			return nil, err
		}
		for _, v := range vals[name] {
			if err := formPut(root, path, formValue(path, v)); err != nil {
				return nil, fmt.Errorf("the form parameter %q: %v", name, err)
			}
		}
	}
	return listify(root).(map[string]any), nil
}

// formPath splits "a[b][]" into "a", "b", "".
func formPath(name string) ([]string, error) {
	head, rest, _ := strings.Cut(name, "[")
	path := []string{head}
	if rest == "" {
		if head == "" {
			return nil, fmt.Errorf("the form has a parameter with no name")
		}
		return path, nil
	}
	for _, seg := range strings.Split(strings.TrimSuffix(rest, "]"), "][") {
		path = append(path, seg)
	}
	return path, nil
}

func formValue(path []string, v string) any {
	if path[0] == "metadata" {
		return v
	}
	switch {
	case integer.MatchString(v):
		return json.Number(v)
	case v == "true":
		return true
	case v == "false":
		return false
	}
	return v
}

// listMark marks a map built from a[] or a[N]: listify turns it into a list.
const listMark = "\x00list"

func formPut(m map[string]any, path []string, v any) error {
	key := path[0]
	if len(path) == 1 {
		if _, dup := m[key]; dup && key != "" {
			return fmt.Errorf("given twice")
		}
		if key == "" { // a[]=x: append
			key = strconv.Itoa(len(m) - 1)
		}
		m[key] = v
		return nil
	}
	child, ok := m[key].(map[string]any)
	if !ok {
		if _, exists := m[key]; exists {
			return fmt.Errorf("both a value and an object")
		}
		child = map[string]any{}
		m[key] = child
	}
	if next := path[1]; next == "" || integer.MatchString(next) {
		child[listMark] = true
	}
	if path[1] == "" && len(path) > 2 {
		return fmt.Errorf("a list of objects needs indexes (a[0][b])")
	}
	return formPut(child, path[1:], v)
}

// listify turns the maps marked as lists into lists, ordered by index.
func listify(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if m[listMark] == true {
		delete(m, listMark)
		idx := make([]int, 0, len(m))
		byIdx := map[int]any{}
		for k, x := range m {
			i, _ := strconv.Atoi(k)
			idx = append(idx, i)
			byIdx[i] = listify(x)
		}
		sort.Ints(idx)
		out := make([]any, len(idx))
		for j, i := range idx {
			out[j] = byIdx[i]
		}
		return out
	}
	for k, x := range m {
		m[k] = listify(x)
	}
	return m
}

// jsonFields parses a recorded payload (the canonical body, after its path
// for paths other than /v1/payouts) back into its fields, or nil.
func jsonFields(payload string) map[string]any {
	if strings.HasPrefix(payload, "/") {
		if _, body, ok := strings.Cut(payload, " "); ok {
			payload = body
		}
	}
	dec := json.NewDecoder(strings.NewReader(payload))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	return m
}
