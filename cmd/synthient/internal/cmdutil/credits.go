package cmdutil

import (
	"errors"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/synthient-go/synthient"
)

// MaxCredits is the value of a --max-credits flag: not given, or the most
// credits a run may spend, 0 or more. Its zero value is not given.
type MaxCredits struct {
	n   int64
	set bool
}

// AddMaxCredits adds --max-credits to fs, bound to m.
func AddMaxCredits(fs *pflag.FlagSet, m *MaxCredits) {
	fs.Var(m, "max-credits", "spend at most N credits: a request that would pass N is not sent (the rest is reported not sent, exit 3)")
}

// String returns N, or "" when not given.
func (m *MaxCredits) String() string {
	if !m.set {
		return ""
	}
	return strconv.FormatInt(m.n, 10)
}

// Set takes N: a whole number of credits, 0 or more.
func (m *MaxCredits) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return errors.New("want a whole number of credits, 0 or more")
	}
	m.n, m.set = n, true
	return nil
}

// Type names the flag's value in the help.
func (*MaxCredits) Type() string { return "N" }

// Limit returns N, and whether the flag was given.
func (m *MaxCredits) Limit() (int64, bool) { return m.n, m.set }

// Given returns N, or nil when the flag was not given.
func (m *MaxCredits) Given() *int64 {
	if !m.set {
		return nil
	}
	n := m.n
	return &n
}

// Options returns the client options of the flag: a credit budget of N
// credits in memory for the run, which never refills; none when the flag
// was not given.
func (m *MaxCredits) Options() []synthient.Option {
	if !m.set {
		return nil
	}
	return []synthient.Option{synthient.WithCreditBudget(synthient.NewCreditBudget(m.n, 0))}
}
