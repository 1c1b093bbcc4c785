// Package interrupt stops a wait that cannot be cancelled itself, such as
// opening a named pipe or reading a terminal, when the command is
// interrupted.
package interrupt

import "context"

// Do returns what f returns, unless ctx is done first or by then: it then
// returns ctx's error (exit 130), and f's result, when f returns, goes to
// drop (nil: dropped as it is). It is for what may block for ever and
// cannot be cancelled: f runs in a goroutine of its own, which outlives
// the call until f returns.
func Do[T any](ctx context.Context, f func() (T, error), drop func(T)) (T, error) {
	type result struct {
		v   T
		err error
	}
	release := func(r result) {
		if drop != nil && r.err == nil {
			drop(r.v)
		}
	}
	done := make(chan result) // unbuffered: f's goroutine knows whether its result was taken
	go func() {
		v, err := f()
		select {
		case done <- result{v, err}:
		case <-ctx.Done():
			release(result{v, err})
		}
	}()
	var zero T
	select {
	case r := <-done:
		if ctx.Err() == nil {
			return r.v, r.err
		}
		release(r) // interrupted meanwhile: stop all the same
	case <-ctx.Done():
	}
	return zero, ctx.Err()
}
