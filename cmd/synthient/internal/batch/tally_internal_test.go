package batch

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/synthient-go/synthient"
)

// sliceError is an error whose type is not comparable.
type sliceError struct{ parts []string }

func (e sliceError) Error() string { return fmt.Sprint(e.parts) }

// Failed addresses are grouped by outcome and error: the same error value,
// or another that is described the same (the report shows only that
// line), extends a group, also for errors whose type is not comparable.
func TestFailureGroupExtends(t *testing.T) {
	t.Parallel()
	e := errors.New("503 Service Unavailable")
	tests := []struct {
		name string
		a, b error
		o    synthient.BulkOutcome
		want bool
	}{
		{"both nil", nil, nil, synthient.NotSent, true},
		{"one nil", nil, e, synthient.NotSent, false},
		{"the other nil", e, nil, synthient.NotSent, false},
		{"the same value", e, e, synthient.NotSent, true},
		{"another outcome", e, e, synthient.Unknown, false},
		{"two described the same", context.Canceled, fmt.Errorf("stopped: %w", context.Canceled), synthient.NotSent, true},
		{"two messages", e, errors.New("502 Bad Gateway"), synthient.NotSent, false},
		{"not comparable, the same message", sliceError{[]string{"a"}}, sliceError{[]string{"a"}}, synthient.NotSent, true},
		{"not comparable, two messages", sliceError{[]string{"a"}}, sliceError{[]string{"b"}}, synthient.NotSent, false},
	}
	// describe renders a wrapped context.Canceled as the SDK's describer
	// would: by what stopped it.
	describe := func(err error) string {
		if errors.Is(err, context.Canceled) {
			return "context canceled"
		}
		return err.Error()
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := failureGroup{outcome: synthient.NotSent, err: tt.a, n: 1}
			assert.Equal(t, tt.want, g.extends(tt.o, tt.b, describe))
		})
	}
}
