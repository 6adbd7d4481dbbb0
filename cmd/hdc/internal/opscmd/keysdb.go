package opscmd

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/health-data-connect/hdc/internal/problem"
)

// keyError words a refusal of the key administration for the command
// line: the detail of its problem (keyadmin.Problem, the database's and a
// registry file's alike), with the flag or command that changes it;
// client is the key's client, for the advice.
func keyError(err error, client string) error {
	var p *problem.Problem
	if !errors.As(err, &p) {
		return err
	}
	switch p.Code {
	case problem.CodeWeakerKey:
		return fmt.Errorf("%s (--allow-weaker)", p.Detail)
	case problem.CodeLastActiveKey:
		return fmt.Errorf("%s (hdc keys rotate --client %s, or --force)", p.Detail, client)
	case problem.CodeNoKeyToRotate:
		return fmt.Errorf("%s with hdc keys add", p.Detail)
	}
	return errors.New(cmp.Or(p.Detail, p.Code))
}

// directOnly refuses --admin for what, which works on this machine's
// files with the keeper: a registry file, an import, a wrap. The Admin
// API knows the database's keys alone.
func (f *storeFlags) directOnly(what string) error {
	if f.Admin.URL != "" {
		return fmt.Errorf("%s works on this machine's files, directly: drop --admin (HDC_ADMIN_URL)", what)
	}
	return nil
}
