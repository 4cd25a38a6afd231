package kubeflags

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// UnreachableError says that the API server could not be asked, and the
// likely cause, in one line.
type UnreachableError struct {
	// Server is the API server's address.
	Server string
	// Cause is the likely cause, said for a user.
	Cause string
	// Err is the error of the request.
	Err error
}

func (u *UnreachableError) Error() string { return fmt.Sprintf("API server %s: %s", u.Server, u.Cause) }
func (u *UnreachableError) Unwrap() error { return u.Err }

// Reach asks the API server of cfg for its core API group (GET /api, which
// needs an authenticated user) through client, a client for cfg, and
// returns nil if it answered; else an *UnreachableError. A command asks it
// first, so that a server it cannot use is said once, within one request
// timeout, rather than by every request after it.
func Reach(ctx context.Context, client rest.Interface, cfg *rest.Config) error {
	err := client.Get().AbsPath("/api").Do(ctx).Error()
	if err == nil {
		return nil
	}
	return &UnreachableError{Server: cfg.Host, Cause: cause(err, cfg.Timeout), Err: err}
}

// cause is the likely cause of err, a failed request with timeout.
func cause(err error, timeout time.Duration) string {
	var (
		dns       *net.DNSError
		verify    *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		host      x509.HostnameError
		invalid   x509.CertificateInvalidError
		header    tls.RecordHeaderError
		netErr    net.Error
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: is the cluster running, and is this its address?"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("no answer within %s (--request-timeout): is this the API server's address, and is it up?", timeout)
	case errors.As(err, &dns):
		return fmt.Sprintf("no such host %q: is this the API server's address?", dns.Name)
	case errors.As(err, &verify):
		return fmt.Sprintf("TLS: %v: check --certificate-authority, --tls-server-name or the kubeconfig's cluster", verify.Err)
	case errors.As(err, &unknownCA), errors.As(err, &host), errors.As(err, &invalid):
		return fmt.Sprintf("TLS: %v: check --certificate-authority, --tls-server-name or the kubeconfig's cluster", errors.Unwrap(err))
	case errors.As(err, &header), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "TLS: the server does not answer in TLS: does the address start with http:// instead?"
	case apierrors.IsUnauthorized(err):
		return "unauthorized: the server did not accept the credentials; log in again, or check --token, --user or the kubeconfig's user"
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("forbidden: %v", err)
	}
	return err.Error()
}
