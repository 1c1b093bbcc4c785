package batch

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// sliceError is an error whose type is not comparable.
type sliceError struct{ parts []string }

func (e sliceError) Error() string { return fmt.Sprint(e.parts) }

// Failed addresses are grouped by outcome and error: the same error value,
// or another saying the same, extends a group (the report shows only the
// message), also for errors whose type is not comparable.
func TestSameError(t *testing.T) {
	t.Parallel()
	e := errors.New("503 Service Unavailable")
	tests := []struct {
		name string
		a, b error
		want bool
	}{
		{"both nil", nil, nil, true},
		{"one nil", nil, e, false},
		{"the other nil", e, nil, false},
		{"the same value", e, e, true},
		{"two saying the same", context.Canceled, fmt.Errorf("%w", context.Canceled), true},
		{"two messages", e, errors.New("502 Bad Gateway"), false},
		{"not comparable, the same message", sliceError{[]string{"a"}}, sliceError{[]string{"a"}}, true},
		{"not comparable, two messages", sliceError{[]string{"a"}}, sliceError{[]string{"b"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, sameError(tt.a, tt.b))
		})
	}
}
