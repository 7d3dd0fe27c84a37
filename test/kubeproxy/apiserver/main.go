// Command apiserver is Kubernetes' real kube-apiserver (cmd/kube-apiserver/app,
// the code the release binary runs) with its storage in an etcd server
// embedded in the same process, so a test gets a whole control plane from
// one binary and one data directory: no etcd binary to find, no second
// process to end. It takes --etcd-data DIR (created if missing; an existing
// one is reused, so a restarted server keeps its objects) before the
// kube-apiserver flags, which it passes on with --etcd-servers set to the
// embedded server. internal/testkit/apiserver builds and runs it.
//
//	go build -modfile=../go.apiserver.v1.37.mod -o apiserver . && ./apiserver --etcd-data /tmp/etcd --secure-port=6443 ...
package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap/zapcore"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // the log formats kube-apiserver's --logging-format knows
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	args := os.Args[1:]
	if len(args) < 2 || args[0] != "--etcd-data" {
		fmt.Fprintln(os.Stderr, "usage: apiserver --etcd-data DIR [kube-apiserver flags]")
		os.Exit(2)
	}
	endpoint, err := startEtcd(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiserver: embedded etcd:", err)
		os.Exit(1)
	}
	command := app.NewAPIServerCommand()
	command.SetArgs(append(args[2:], "--etcd-servers="+endpoint))
	os.Exit(cli.Run(command))
}

// startEtcd starts a one-member etcd on loopback ports of its own, its
// data in dir, and returns its client URL once it serves. Its writes are
// fsynced as etcd's always are: a test that kills the process and starts
// another on dir must find what the first one stored.
func startEtcd(dir string) (string, error) {
	ports, err := freePorts(2)
	if err != nil {
		return "", err
	}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	client := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	peer := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = zapcore.WarnLevel.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return "", err
	case <-time.After(60 * time.Second):
		e.Close()
		return "", fmt.Errorf("not ready after 60s (data in %s)", dir)
	}
	go func() {
		// etcd failing under a running API server ends the process, so
		// the test sees a dead server rather than one that times out.
		if err := <-e.Err(); err != nil {
			fmt.Fprintln(os.Stderr, "apiserver: embedded etcd failed:", err)
			os.Exit(1)
		}
	}()
	return client.String(), nil
}

// freePorts returns n loopback ports that were free a moment ago (the
// kernel picks them; the listeners close just before etcd binds them).
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("picking a loopback port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
