package providertest

import (
	"net/url"
	"strconv"
)

// derive returns the rejections Run makes of an authentic delivery: each
// signed header and query value cut short by one byte, and, when the body
// is signed, the body cut short and each of its bytes with one bit flipped.
func derive(d Delivery, v Vectors) []Rejected {
	var out []Rejected
	add := func(c Class, name string, m Delivery) {
		m.Name = d.Name + ": " + name
		out = append(out, Rejected{Delivery: m, Class: c, Kind: v.RejectKind})
	}
	for _, h := range v.SignedHeaders {
		if val := d.Header.Get(h); val != "" {
			m := d
			m.Header = d.Header.Clone()
			m.Header.Set(h, val[:len(val)-1])
			add(Truncated, h+" cut short", m)
		}
	}
	for _, k := range v.SignedQuery {
		if val := d.Query.Get(k); val != "" {
			m := d
			m.Query = url.Values{}
			for key, vals := range d.Query {
				m.Query[key] = append([]string(nil), vals...)
			}
			m.Query.Set(k, val[:len(val)-1])
			add(Truncated, k+" cut short", m)
		}
	}
	if !v.BodySigned || len(d.Body) == 0 {
		return out
	}
	m := d
	m.Body = d.Body[:len(d.Body)-1]
	add(Truncated, "body cut short", m)
	for i := range d.Body {
		m := d
		m.Body = append([]byte(nil), d.Body...)
		m.Body[i] ^= 0x01
		add(Forged, "body byte "+strconv.Itoa(i)+" flipped", m)
	}
	return out
}
