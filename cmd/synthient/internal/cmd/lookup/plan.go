package lookup

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/addrinput"
	"github.com/synthient-go/synthient/cmd/synthient/internal/batch"
	"github.com/synthient-go/synthient/cmd/synthient/internal/journal"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// planRun is --dry-run: it reads and checks the input as a run would,
// and prints what the run would send and cost (synthient.
// PlanLookupIPsAll), whether that fits --max-credits, and, with a key,
// the credits left. With a journal, what it would send is what the
// journal does not settle: the credits of the rest of the run. Nothing billed
// is sent, and nothing changes on disk: the journal is read as it is
// (journal.Read), without its lock. Invalid lines are reported, and
// counted, as in a run.
func planRun(ctx context.Context, o *BulkOptions, in io.Reader) error {
	cfg := o.Batch
	lines := addrinput.NewReader(ctx, in, cfg.ReportInvalid)
	defer lines.Close()
	j, err := readJournal(o.Journal)
	if err != nil {
		return err
	}
	var inJournal *int64
	if o.Journal != "" {
		inJournal = new(int64)
	}
	if j != nil {
		lines.Skip = func(ip netip.Addr) bool {
			st := j.State(ip)
			return st == journal.LookedUp || st == journal.Unknown && !o.ResendUnknown
		}
	}
	plan, err := synthient.PlanLookupIPsAll(lines.Addrs(), o.params())
	if err != nil {
		return err
	}
	for e, ok := lines.Next(); ok; e, ok = lines.Next() {
		if e.Skipped {
			*inJournal++
		}
	}
	if err := lines.End(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writePlan(cfg, plan, inJournal, creditsLeft(ctx, o), o.MaxCredits.Given()); err != nil {
		return err
	}
	if plan.Addresses+deref(inJournal) == 0 && cfg.NoAddress != nil {
		return cfg.NoAddress
	}
	if err := batch.NoAddressError(plan.Invalid, plan.Addresses+deref(inJournal), cfg.InvalidWhere()); err != nil {
		return err
	}
	cfg.InvalidNote(plan.Invalid)
	return nil
}

// deref returns *n, or 0 for nil.
func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// dryRunPlan is the JSON form of a dry run's plan.
type dryRunPlan struct {
	Addresses   int64  `json:"addresses"`
	Journal     *int64 `json:"journal,omitempty"` // settled by the journal: not sent again
	Invalid     int64  `json:"invalid"`
	Duplicates  int64  `json:"duplicates"`
	Distinct    int64  `json:"distinct"`
	Requests    int64  `json:"requests"`
	Credits     int64  `json:"credits"`
	CreditsLeft *int64 `json:"credits_left,omitempty"`
	Fits        *bool  `json:"fits,omitempty"`
	// MaxCredits is --max-credits; FitsMax whether Credits fit in it.
	MaxCredits *int64 `json:"max_credits,omitempty"`
	FitsMax    *bool  `json:"fits_max_credits,omitempty"`
}

// writePlan prints plan, with the addresses the journal settles when
// inJournal is not nil, the credits left when left is not nil, and
// whether the plan fits --max-credits when maxCredits is not nil.
func writePlan(cfg *batch.Config, plan *synthient.BulkPlan, inJournal, left, maxCredits *int64) error {
	p := dryRunPlan{Addresses: plan.Addresses + deref(inJournal), Journal: inJournal, Invalid: plan.Invalid, Duplicates: plan.Duplicates,
		Distinct: plan.Distinct, Requests: plan.Requests, Credits: plan.Credits, CreditsLeft: left, MaxCredits: maxCredits}
	if left != nil {
		fits := *left >= plan.Credits
		p.Fits = &fits
	}
	if maxCredits != nil {
		fits := *maxCredits >= plan.Credits
		p.FitsMax = &fits
	}
	pr := cfg.Printer
	switch {
	case pr.JSON():
		return pr.Emit(p)
	case pr.CSV():
		return render.WriteCSV(pr.Out, planCSVHeader, planCSVRow(&p))
	}
	t := render.NewTable(pr.Out)
	t.Row("Addresses", strconv.FormatInt(p.Addresses, 10))
	if inJournal != nil {
		t.Row("In the journal", strconv.FormatInt(*inJournal, 10)+" (not sent again)")
	}
	for _, r := range []struct {
		name string
		n    int64
	}{{"Invalid", p.Invalid}, {"Duplicates", p.Duplicates},
		{"Distinct", p.Distinct}, {"Requests", p.Requests}, {"Credits", p.Credits}} {
		t.Row(r.name, strconv.FormatInt(r.n, 10))
	}
	if left != nil {
		verdict := "enough"
		if !*p.Fits {
			verdict = "not enough"
		}
		t.Row("Credits left", fmt.Sprintf("%d (%s)", *left, verdict))
	}
	if maxCredits != nil {
		verdict := "fits"
		if !*p.FitsMax {
			verdict = "does not fit: the run would stop sending before its end"
		}
		t.Row("Max credits", fmt.Sprintf("%d (%s)", *maxCredits, verdict))
	}
	return t.Flush()
}

// creditsLeft asks the account's credits (a free request) when a key is
// configured; nil without one, or when the request fails, which it
// reports on stderr without failing the dry run.
func creditsLeft(ctx context.Context, o *BulkOptions) *int64 {
	if !o.HasKey() {
		return nil
	}
	c, err := o.Client()
	if err == nil {
		var acct *synthient.Account
		if acct, err = c.Account(ctx); err == nil {
			return &acct.LookupQuota.Credits
		}
	}
	_, _ = fmt.Fprintln(o.Batch.Err, "synthient: credits left unknown: "+o.Batch.Describe(err)) // stderr: a failed write has nowhere to be reported
	return nil
}

var planCSVHeader = []string{"addresses", "invalid", "duplicates", "distinct", "requests", "credits", "credits_left", "fits", "journal",
	"max_credits", "fits_max_credits"}

// planCSVRow is a dry run's row under planCSVHeader: credits_left and
// fits are empty without a key, journal without --journal, max_credits
// and fits_max_credits without --max-credits.
func planCSVRow(p *dryRunPlan) []string {
	left, fits, inJournal, maxCredits, fitsMax := "", "", "", "", ""
	if p.CreditsLeft != nil {
		left, fits = strconv.FormatInt(*p.CreditsLeft, 10), strconv.FormatBool(*p.Fits)
	}
	if p.Journal != nil {
		inJournal = strconv.FormatInt(*p.Journal, 10)
	}
	if p.MaxCredits != nil {
		maxCredits, fitsMax = strconv.FormatInt(*p.MaxCredits, 10), strconv.FormatBool(*p.FitsMax)
	}
	return []string{strconv.FormatInt(p.Addresses, 10), strconv.FormatInt(p.Invalid, 10),
		strconv.FormatInt(p.Duplicates, 10), strconv.FormatInt(p.Distinct, 10),
		strconv.FormatInt(p.Requests, 10), strconv.FormatInt(p.Credits, 10), left, fits, inJournal, maxCredits, fitsMax}
}
