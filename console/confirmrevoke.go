package console

// revokeView is the confirmation of a revocation (a certificate, a
// sharing grant, a webhook destination, a client's limits): what it
// takes away, what follows, and the form that confirms it.
type revokeView struct {
	// Facts name what is revoked, each a row of the page.
	Facts       []fact
	Consequence string
	// Action is the path the confirming form posts to, with Fields as
	// hidden fields; Button its button's words, Cancel the page to go
	// back to.
	Action, Button, Cancel string
	Fields                 []fact
}

// fact is a row of a confirmation: a name and its value.
type fact struct{ Name, Value string }

// confirmRevoke is the view of a confirmation titled title.
func confirmRevoke(title, nav string, rv revokeView) view {
	return view{Template: "confirm-revoke", Title: "Confirm: " + title, Nav: nav, Data: rv}
}
