package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/imgctl/imgctl/sign"
)

// ErrNoPassword is returned when no password is given: COSIGN_PASSWORD is
// unset and stdin has nothing.
var ErrNoPassword = errors.New("no password: set COSIGN_PASSWORD or give it on stdin")

// keygenOptions are the flags of keygen.
type keygenOptions struct {
	prefix string
}

func newKeygenCmd(ro *rootOptions) *cobra.Command {
	o := &keygenOptions{}
	cmd := &cobra.Command{
		Use:   "keygen [PREFIX]",
		Short: "Make a cosign key pair (PREFIX.key, encrypted, and PREFIX.pub)",
		Long: `keygen makes an ECDSA P-256 key pair in cosign's own format, as
cosign generate-key-pair does: the private key encrypted with a password, and
the public key, written to PREFIX.key and PREFIX.pub (default cosign). PREFIX
may be given as the argument or with --output-key-prefix, cosign's flag; both
at once must agree. The password comes from COSIGN_PASSWORD when it is set
(even empty), otherwise from a prompt: read without echo on a terminal (twice,
to confirm), or as one line of stdin. Existing files are never overwritten.`,
		Example: `  COSIGN_PASSWORD=... imgctl keygen
  imgctl keygen release
  imgctl keygen --output-key-prefix release`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args) },
	}
	cmd.Flags().StringVar(&o.prefix, "output-key-prefix", "cosign", "write PREFIX.key and PREFIX.pub")
	return cmd
}

// run runs the verb with the parsed flags.
func (o *keygenOptions) run(cmd *cobra.Command, ro *rootOptions, args []string) error {
	prefix := o.prefix
	if len(args) == 1 {
		if f := cmd.Flags().Lookup("output-key-prefix"); f.Changed && prefix != args[0] {
			return fmt.Errorf("%w: PREFIX %q and --output-key-prefix %q differ: give one of them", ErrUsage, args[0], prefix)
		}
		prefix = args[0]
	}
	pw, err := password(cmd, true)
	if err != nil {
		return err
	}
	kp, err := sign.GenerateKeyPair(pw)
	if err != nil {
		return err
	}
	priv, pub := prefix+".key", prefix+".pub"
	if err := sign.WriteKeyPair(kp, priv, pub); err != nil {
		return err
	}
	if ro.output == "json" {
		return writeJSON(cmd.OutOrStdout(), map[string]string{"private": priv, "public": pub})
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "Private key written to %s\nPublic key written to %s\n", priv, pub)
	return err
}

// password returns COSIGN_PASSWORD when it is set, even empty. Otherwise,
// when the command's stdin is a terminal, it prompts on stderr and reads
// without echo (twice when confirm is set); when it is not, it reads one
// line of stdin.
func password(cmd *cobra.Command, confirm bool) ([]byte, error) {
	if pw, ok := os.LookupEnv("COSIGN_PASSWORD"); ok {
		return []byte(pw), nil
	}
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return promptPassword(cmd.ErrOrStderr(), int(f.Fd()), confirm)
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && (!errors.Is(err, io.EOF) || line == "") {
		return nil, fmt.Errorf("%w (%w)", ErrNoPassword, err)
	}
	return []byte(strings.TrimRight(line, "\r\n")), nil
}

func promptPassword(w io.Writer, fd int, confirm bool) ([]byte, error) {
	read := func(prompt string) ([]byte, error) {
		fmt.Fprint(w, prompt)
		pw, err := term.ReadPassword(fd)
		fmt.Fprintln(w)
		if err != nil {
			return nil, fmt.Errorf("reading password: %w", err)
		}
		return pw, nil
	}
	pw, err := read("Enter password for private key: ")
	if err != nil || !confirm {
		return pw, err
	}
	again, err := read("Enter password for private key again: ")
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(pw, again) {
		return nil, fmt.Errorf("%w: the passwords do not match", ErrUsage)
	}
	return pw, nil
}
