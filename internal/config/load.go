package config

import "github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"

// Load reads file (a host path under root; a missing file means defaults),
// then the environment (env, as os.Environ), then the kernel command line
// words, highest last. Errors name the file, key and value.
// TODO(config): placeholder signature, implemented by the config work.
func Load(root hostfs.Root, file string, env []string, cmdline []string) (Config, error) {
	return Config{}, nil
}
