package lookup

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/addrinput"
	"github.com/synthient-go/synthient/cmd/synthient/internal/batch"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// planRun is --dry-run: it reads and checks the input as a run would,
// and prints what the run would send and cost (synthient.
// PlanLookupIPsAll), and, with a key, the credits left. Nothing billed
// is sent. Invalid lines are reported, and counted, as in a run.
func planRun(ctx context.Context, o *IPsOptions, in io.Reader) error {
	cfg := o.Batch
	lines := addrinput.NewReader(ctx, in, cfg.ReportInvalid)
	defer lines.Close()
	plan, err := synthient.PlanLookupIPsAll(lines.Addrs(), o.params())
	if err != nil {
		return err
	}
	if err := lines.End(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writePlan(cfg, plan, creditsLeft(ctx, o)); err != nil {
		return err
	}
	if err := batch.NoAddressError(plan.Invalid, plan.Addresses, cfg.InvalidWhere()); err != nil {
		return err
	}
	cfg.InvalidNote(plan.Invalid)
	return nil
}

// dryRunPlan is the JSON form of a dry run's plan.
type dryRunPlan struct {
	Addresses   int64  `json:"addresses"`
	Invalid     int64  `json:"invalid"`
	Duplicates  int64  `json:"duplicates"`
	Distinct    int64  `json:"distinct"`
	Requests    int64  `json:"requests"`
	Credits     int64  `json:"credits"`
	CreditsLeft *int64 `json:"credits_left,omitempty"`
	Fits        *bool  `json:"fits,omitempty"`
}

// writePlan prints plan, with the credits left when left is not nil.
func writePlan(cfg *batch.Config, plan *synthient.BulkPlan, left *int64) error {
	p := dryRunPlan{Addresses: plan.Addresses, Invalid: plan.Invalid, Duplicates: plan.Duplicates,
		Distinct: plan.Distinct, Requests: plan.Requests, Credits: plan.Credits, CreditsLeft: left}
	if left != nil {
		fits := *left >= plan.Credits
		p.Fits = &fits
	}
	pr := cfg.Printer
	switch {
	case pr.JSON():
		return pr.Emit(p)
	case pr.CSV():
		return render.WriteCSV(pr.Out, planCSVHeader, planCSVRow(&p))
	}
	t := render.NewTable(pr.Out)
	for _, r := range []struct {
		name string
		n    int64
	}{{"Addresses", p.Addresses}, {"Invalid", p.Invalid}, {"Duplicates", p.Duplicates},
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
	return t.Flush()
}

// creditsLeft asks the account's credits (a free request) when a key is
// configured; nil without one, or when the request fails, which it
// reports on stderr without failing the dry run.
func creditsLeft(ctx context.Context, o *IPsOptions) *int64 {
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
	fmt.Fprintln(o.Batch.Err, "synthient: credits left unknown: "+o.Batch.Describe(err))
	return nil
}

var planCSVHeader = []string{"addresses", "invalid", "duplicates", "distinct", "requests", "credits", "credits_left", "fits"}

// planCSVRow is a dry run's row under planCSVHeader: the last two cells
// are empty without a key.
func planCSVRow(p *dryRunPlan) []string {
	left, fits := "", ""
	if p.CreditsLeft != nil {
		left, fits = strconv.FormatInt(*p.CreditsLeft, 10), strconv.FormatBool(*p.Fits)
	}
	return []string{strconv.FormatInt(p.Addresses, 10), strconv.FormatInt(p.Invalid, 10),
		strconv.FormatInt(p.Duplicates, 10), strconv.FormatInt(p.Distinct, 10),
		strconv.FormatInt(p.Requests, 10), strconv.FormatInt(p.Credits, 10), left, fits}
}
