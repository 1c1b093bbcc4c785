package feedindex

import "fmt"

// A tuple is what a row says of an address besides its time: its
// provider, type and country (indexes of strings) and its ASN. Every
// distinct tuple is kept once, in the dictionary, and an entry names it
// by its index: most rows share a few thousand tuples.
type tuple struct {
	provider, typ, country uint32
	asn                    uint32
}

// maxTuples bounds the distinct tuples of an index, and maxStrings its
// distinct strings: far above what the feeds hold (hundreds of providers,
// a few hundred countries, some tens of thousands of ASNs), and a
// dictionary of either size still fits in memory.
const (
	maxTuples  = 1 << 24
	maxStrings = 1 << 20
	// maxString is the longest provider, type or country kept.
	maxString = 1 << 10
)

// view is the dictionary as a snapshot sees it: it only grows, and a
// snapshot's view is a prefix of every later one.
type view struct {
	strs   []string
	tuples []tuple
}

// textTuple is a tuple as a row gives it.
type textTuple struct {
	provider, typ, country string
	asn                    uint32
}

// dict is the dictionary of the index's writer. A row's strings are
// looked up one by one (maps of string keys are Go's fastest), then the
// tuple of their indexes.
type dict struct {
	view
	strIDs map[string]uint32
	tupIDs map[tuple]uint32
}

// newDict returns the writer's dictionary holding v.
func newDict(v view) *dict {
	d := &dict{view: v, strIDs: make(map[string]uint32, len(v.strs)), tupIDs: make(map[tuple]uint32, len(v.tuples))}
	for i, s := range v.strs {
		d.strIDs[s] = uint32(i)
	}
	for i, t := range v.tuples {
		d.tupIDs[t] = uint32(i)
	}
	return d
}

// id returns the index of t, adding it.
func (d *dict) id(t textTuple) (uint32, error) {
	var tu tuple
	var err error
	if tu.provider, err = d.str(t.provider); err != nil {
		return 0, err
	}
	if tu.typ, err = d.str(t.typ); err != nil {
		return 0, err
	}
	if tu.country, err = d.str(t.country); err != nil {
		return 0, err
	}
	tu.asn = t.asn
	if id, ok := d.tupIDs[tu]; ok {
		return id, nil
	}
	if len(d.tuples) >= maxTuples {
		return 0, fmt.Errorf("%w: more than %d tuples of provider, type, country and ASN", ErrLimit, maxTuples)
	}
	id := uint32(len(d.tuples)) //nolint:gosec // fewer than maxTuples
	d.tuples = append(d.tuples, tu)
	d.tupIDs[tu] = id
	return id, nil
}

// str returns the index of s, adding it.
func (d *dict) str(s string) (uint32, error) {
	if id, ok := d.strIDs[s]; ok {
		return id, nil
	}
	if len(d.strs) >= maxStrings {
		return 0, fmt.Errorf("%w: more than %d strings", ErrLimit, maxStrings)
	}
	id := uint32(len(d.strs)) //nolint:gosec // fewer than maxStrings
	d.strs = append(d.strs, s)
	d.strIDs[s] = id
	return id, nil
}
