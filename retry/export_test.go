package retry

// What the tests of package retry_test see of the package's internals.

// GoText is an entry of goTexts: an error text of net/http or crypto/tls,
// the whole text of an error (Whole) or its beginning.
type GoText struct {
	Text  string
	Whole bool
}

// GoTexts returns the entries of goTexts.
func GoTexts() []GoText {
	out := make([]GoText, len(goTexts))
	for i, t := range goTexts {
		out[i] = GoText{t.text, t.whole}
	}
	return out
}
