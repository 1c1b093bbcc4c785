package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// tools are the server's tools and what every session shares: one client,
// and so one cache and one sharing of identical lookups in flight.
type tools struct {
	client   *synthient.Client
	describe func(error) string               // an error as one line (the CLI's)
	redact   func(string) string              // server text without the key
	log      func(format string, args ...any) // a line of the server's log on stderr
	// budgets returns the budget of a session; nil without
	// --max-credits-per-session (see credits.go).
	budgets func(*gomcp.ServerSession) sessionBudget
}

// instructions tell the model what the server's tools cost and promise.
const instructions = `Synthient's IP and domain intelligence, account, feed exports and real-time streams.
lookup_ip and lookup_domain cost credits (1 per address or domain; n addresses at once ceil(0.9 n)); the other tools are free.
Every result says credits_spent (and credits_left when the session has a budget: a call that does not fit in it is refused, nothing sent or charged).
Answers are cached for every session of this server: repeating a lookup is free, and the result says cached and cache_age_seconds.
A failed call returns error: read its hint, retry_after_seconds and may_have_been_charged before calling again.`

// newServer returns the MCP server of t's tools.
func newServer(t *tools) *gomcp.Server {
	srv := gomcp.NewServer(&gomcp.Implementation{Name: "synthient", Title: "Synthient", Version: synthient.Version},
		&gomcp.ServerOptions{Instructions: instructions})
	srv.AddReceivingMiddleware(structuredErrors)
	// Each tool is registered here, one line each; a tool that needs
	// more than the client (a local index) takes it from tools.
	addLookupIP(srv, t)
	addLookupDomain(srv, t)
	addGetAccount(srv, t)
	addListFeedStreams(srv, t)
	addListFeedSnapshots(srv, t)
	addFeedSnapshotMeta(srv, t)
	addSampleStream(srv, t)
	return srv
}

// outcome is what every result holds beside the tool's own fields.
type outcome struct {
	CreditsSpent int64 `json:"credits_spent" jsonschema:"credits this call spent: 0 for a free tool, and for an answer from the cache or from an identical call's request"`
	// CreditsMayHaveSpent is not in CreditsSpent.
	CreditsMayHaveSpent int64  `json:"credits_may_have_spent,omitempty" jsonschema:"credits of requests that reached the API and then failed: it may have charged them"`
	CreditsLeft         *int64 `json:"credits_left,omitempty" jsonschema:"credits left of this session's budget; absent when the session has none"`
	// Error is set on a result whose isError is true, and only there.
	Error *toolError `json:"error,omitempty" jsonschema:"why the call failed"`
}

func (o *outcome) base() *outcome { return o }

// result is the output of a tool: its own fields, an outcome, and its
// rendering as text.
type result[T any] interface {
	*T
	base() *outcome
	text() string
}

// tool describes a tool to addTool.
type tool struct {
	name, title, description string
	// billed reports a tool that costs credits: not idempotent, since a
	// repeat that misses the cache is charged again.
	billed bool
	bounds []bound           // of the arguments
	args   map[string]string // descriptions of arguments, by name, beside their fields' tags
}

// handler is a tool's work: it returns its output (with the credits it
// spent) and, for a failed call, the error, and out as far as it got.
type handler[In, Out any] func(ctx context.Context, in In) (*Out, error)

// errPanicked is the error of a call whose handler panicked.
var errPanicked = errors.New("internal error: the server failed while handling the call (a bug; it was logged)")

// addTool registers h as tool tl. Every call gets: a panic turned into an
// error result, the session's budget reported, an error turned into a
// result with isError (its error field says what and why), a text
// rendering beside the structured output, and a line on stderr when the
// client cancelled the call, saying what it may have cost.
func addTool[In, Out any, R result[Out]](srv *gomcp.Server, t *tools, tl tool, h handler[In, Out]) {
	def := &gomcp.Tool{
		Name:         tl.name,
		Title:        tl.title,
		Description:  tl.description,
		InputSchema:  inputSchema[In](tl.bounds, tl.args),
		OutputSchema: outputSchema[Out](),
		Annotations: &gomcp.ToolAnnotations{Title: tl.title, ReadOnlyHint: true, IdempotentHint: !tl.billed,
			OpenWorldHint: ptr(true)},
	}
	gomcp.AddTool(srv, def, func(ctx context.Context, req *gomcp.CallToolRequest, in In) (*gomcp.CallToolResult, *Out, error) {
		ctx = withCallCost(ctx, &callCost{})
		budget := t.budgetOf(req.Session)
		if budget != nil {
			ctx = withSessionBudget(ctx, budget)
		}
		out, err := safely(ctx, t, tl.name, h, in)
		if out == nil {
			out = new(Out)
		}
		var r R = out
		b := r.base()
		if budget != nil {
			left := budget.Left()
			b.CreditsLeft = &left
		}
		if ctx.Err() != nil {
			t.cancelled(tl.name, b)
		}
		if err == nil {
			return textResult(r.text(), b), out, nil
		}
		maybe := b.CreditsMayHaveSpent > 0 || tl.billed && errors.Is(err, errPanicked)
		b.Error = t.toolError(err, maybe)
		res := textResult(b.Error.text(), b)
		res.IsError = true
		return res, out, nil
	})
}

// safely runs h, turning a panic into errPanicked: the server goes on,
// and the result says the call failed, never where (no stack on the
// wire). The panic is logged on stderr.
func safely[In, Out any](ctx context.Context, t *tools, name string, h handler[In, Out], in In) (out *Out, err error) {
	defer func() {
		if p := recover(); p != nil {
			t.log("%s: internal error: %v", name, p)
			out, err = nil, errPanicked
		}
	}()
	return h(ctx, in)
}

// cancelled logs a call the client cancelled, with what it may have cost:
// the credits of what was already sent.
func (t *tools) cancelled(name string, b *outcome) {
	switch sent := b.CreditsSpent + b.CreditsMayHaveSpent; {
	case sent == 0:
		t.log("%s cancelled by the client: nothing was charged", name)
	default:
		t.log("%s cancelled by the client: what was already sent may have been charged (%s)", name, render.Plural(sent, "credit", "credits"))
	}
}

// textResult is a result whose text is text and the credits line of b.
func textResult(text string, b *outcome) *gomcp.CallToolResult {
	text = strings.TrimRight(text, "\n") + "\n" + creditsLine(b)
	return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: safeText(text)}}}
}

// creditsLine is the last line of every text: what the call spent, and
// what is left of the session's budget.
func creditsLine(b *outcome) string {
	line := fmt.Sprintf("Credits spent: %d", b.CreditsSpent)
	if b.CreditsMayHaveSpent > 0 {
		line += fmt.Sprintf(" (and %d may have been charged)", b.CreditsMayHaveSpent)
	}
	if b.CreditsLeft != nil {
		line += fmt.Sprintf("; left in this session's budget: %d", *b.CreditsLeft)
	}
	return line + "."
}

// structuredErrors gives the error results the SDK makes itself (an
// argument that does not match the tool's input schema) the structured
// error every other result has: the argument at fault, and nothing sent.
func structuredErrors(next gomcp.MethodHandler) gomcp.MethodHandler {
	return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*gomcp.CallToolResult)
		if err != nil || !ok || !r.IsError || r.StructuredContent != nil {
			return res, err
		}
		var msg strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*gomcp.TextContent); ok {
				msg.WriteString(tc.Text)
			}
		}
		te := &toolError{Message: schemaMessage(msg.String()), Argument: schemaArgument(msg.String())}
		te.Hint = hintOf(te)
		r.StructuredContent = &outcome{Error: te}
		r.Content = []gomcp.Content{&gomcp.TextContent{Text: safeText(te.text() + "\n" + creditsLine(&outcome{}))}}
		return r, nil
	}
}

func ptr[T any](v T) *T { return &v }

// safeText is text for the model, and for the terminal a client may show
// it on: the CLI's colour marks removed, and control characters (from the
// API's text) made visible.
func safeText(s string) string {
	return string(textsafe.AppendText(nil, []byte(textsafe.Unpaint(s)), true))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
