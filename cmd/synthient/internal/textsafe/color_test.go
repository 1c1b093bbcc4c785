package textsafe_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// A painted text is its text, less its marks, and as wide as it.
func TestPaint(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "82", "über", "a b"} {
		p := textsafe.Paint(textsafe.Red, s)
		assert.Equal(t, s, textsafe.Unpaint(p))
		assert.Equal(t, len([]rune(s)), textsafe.Width(p))
		assert.Equal(t, s, textsafe.Unpaint(s), "a text without marks")
	}
	two := textsafe.Paint(textsafe.Bold, "a") + "-" + textsafe.Paint(textsafe.Cyan, "b")
	assert.Equal(t, "a-b", textsafe.Unpaint(two))
	assert.Equal(t, 3, textsafe.Width(two))
}
