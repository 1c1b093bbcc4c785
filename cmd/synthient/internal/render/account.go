package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/synthient-go/synthient"
)

// WriteAccount prints an account as a two-column table: name, email,
// organization, scopes, credits and when they refill, and the key.
func WriteAccount(w io.Writer, acct *synthient.Account) error {
	t := NewTable(w)
	t.Row("Name", strings.TrimSpace(acct.FirstName+" "+acct.LastName))
	t.Row("Email", acct.Email)
	t.Row("Organization", fmt.Sprintf("%s (%s, %s)", acct.Organization.Name, OrDash(acct.Organization.Relation), OrDash(acct.Organization.ID)))
	t.Row("Scopes", List(acct.Scopes))
	t.Row("Credits", strconv.FormatInt(acct.LookupQuota.Credits, 10))
	t.Row("Credits reset in", HumanDuration(acct.LookupQuota.ResetsInDuration()))
	if k := acct.APIKey; k != nil {
		t.Row("API key", fmt.Sprintf("%s (%s, created %s)", k.Name, k.ID, k.CreatedAt.UTC().Format(time.DateOnly)))
	}
	return t.Flush()
}
