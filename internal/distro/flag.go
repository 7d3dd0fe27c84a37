package distro

// Kind is a command-line flag value (pflag.Value) so that --distribution is
// parsed where the names live: a wrong name is the flag's usage error, and
// "auto" stays the empty Kind that Find resolves from the host.

// Set parses s as Parse does.
func (k *Kind) Set(s string) error {
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// String is the flag's value as given ("" for auto).
func (k *Kind) String() string { return string(*k) }

// Type names the value in --help.
func (k *Kind) Type() string { return "distribution" }
