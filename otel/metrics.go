package otel

import (
	"context"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// instruments are an Observer's metrics (see the package documentation).
type instruments struct {
	duration    metric.Float64Histogram
	calls       metric.Int64Counter
	retries     metric.Int64Counter
	rateLimited metric.Int64Counter
	holds       metric.Int64Counter
	downloaded  metric.Int64Counter
	cacheHits   metric.Int64Counter
	coalesced   metric.Int64Counter
	saved       metric.Int64Counter
	cacheErrors metric.Int64Counter
	reserved    metric.Int64Counter
	spent       metric.Int64Counter
	refunded    metric.Int64Counter
	refused     metric.Int64Counter
}

// durationBuckets are the bucket boundaries the HTTP semantic conventions
// advise for http.client.request.duration, in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// newInstruments creates the instruments with m.
func newInstruments(m metric.Meter) (instruments, error) {
	duration, err := httpconv.NewClientRequestDuration(m, metric.WithExplicitBucketBoundaries(durationBuckets...))
	ins := instruments{duration: duration.Inst()}
	counters := []struct {
		c                 *metric.Int64Counter
		name, unit, about string
	}{
		{&ins.calls, "synthient.client.calls", "{call}", "Calls of the client's methods, by operation and outcome."},
		{&ins.retries, "synthient.client.retries", "{retry}", "Requests sent again, by operation and reason."},
		{&ins.rateLimited, "synthient.client.rate_limited", "{response}", "429 Too Many Requests answers, by operation."},
		{&ins.holds, "synthient.client.pacing.holds", "{hold}", "Requests held by rate-limit pacing, by operation and bucket."},
		{&ins.downloaded, "synthient.client.download.size", "By", "Bytes written by downloads, by operation."},
		{&ins.cacheHits, "synthient.client.cache.hits", "{answer}", "Answers taken from the client's lookup cache, by operation."},
		{&ins.coalesced, "synthient.client.coalesced", "{call}", "Calls that shared the request of an identical call in flight, by operation."},
		{&ins.saved, "synthient.client.credits_saved", "{credit}", "Credits that the cache and shared requests saved, by operation."},
		{&ins.cacheErrors, "synthient.client.cache.errors", "{call}", "Calls during which the lookup cache failed, by operation."},
		{&ins.reserved, "synthient.client.credits.reserved", "{credit}", "Credits reserved from the client's credit budget before requests were sent, by operation."},
		{&ins.spent, "synthient.client.credits.spent", "{credit}", "Credits the credit budget kept as spent: charged by the API, or maybe charged, by operation."},
		{&ins.refunded, "synthient.client.credits.refunded", "{credit}", "Credits given back to the credit budget, the API having charged nothing, by operation."},
		{&ins.refused, "synthient.client.credits.refused", "{credit}", "The cost of requests the credit budget refused, which were not sent, by operation."},
	}
	for _, c := range counters {
		var cerr error
		*c.c, cerr = m.Int64Counter(c.name, metric.WithUnit(c.unit), metric.WithDescription(c.about))
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return instruments{}, err
	}
	return ins, nil
}

// errorTypes are the error.type of the SDK's sentinels, in the order they
// are tried: an error of a cancelled call also reaches the last attempt's
// error, and a held first attempt is a *ConnectionError.
var errorTypes = []struct {
	err  error
	name string
}{
	{context.Canceled, "context_canceled"},
	{context.DeadlineExceeded, "context_deadline_exceeded"},
	{synthient.ErrRateLimitHold, "rate_limit_hold"},
	{synthient.ErrCreditBudget, "credit_budget"},
	{synthient.ErrInvalidArgument, "invalid_argument"},
	{synthient.ErrClosed, "closed"},
	{synthient.ErrSizeMismatch, "size_mismatch"},
	{synthient.ErrSizeUnknown, "size_unknown"},
	{synthient.ErrChecksumMismatch, "checksum_mismatch"},
}

// errorType is the error.type of a call's error (see the package
// documentation).
func errorType(err error) string {
	for _, t := range errorTypes {
		if errors.Is(err, t.err) {
			return t.name
		}
	}
	var apiErr *synthient.APIError
	var timeout *synthient.TimeoutError
	var conn *synthient.ConnectionError
	var decode *synthient.DecodeError
	var base *synthient.Error
	switch {
	case errors.As(err, &base) && base.StopReason == retry.CreditBudgetFailed:
		return "credit_budget_failed"
	case errors.As(err, &apiErr):
		return strconv.Itoa(apiErr.Status)
	case errors.As(err, &timeout):
		return "timeout"
	case errors.As(err, &conn):
		return "connection"
	case errors.As(err, &decode):
		return "decode"
	}
	return "_OTHER"
}
