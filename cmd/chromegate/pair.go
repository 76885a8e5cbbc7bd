package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/executor/ext/pairing"
	"github.com/chromegate/chromegate/extension"
)

const extensionUsage = `usage:
  chromegate extension install DIR   write the extension to DIR, for chrome://extensions "Load unpacked"
  chromegate extension path          write it to the data dir (if missing or older) and print where
  chromegate extension pack [FILE]   write it as a zip (default: chromegate-extension-VERSION.zip); unzip, then "Load unpacked"
`

func cmdExtension(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, extensionUsage)
		return errUsage
	}
	fs := flag.NewFlagSet("extension", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, extensionUsage) }
	dataDir := fs.String("data-dir", "", "chromegate's data dir (default: "+cdp.DefaultDataDir()+")")
	if err := parseArgs(fs, args[1:]); err != nil {
		return err
	}
	var dir string
	switch args[0] {
	case "pack":
		if fs.NArg() > 1 {
			fmt.Fprint(stderr, extensionUsage)
			return errUsage
		}
		return packExtension(fs.Arg(0), stdout)
	case "install":
		if fs.NArg() != 1 {
			fmt.Fprint(stderr, extensionUsage)
			return errUsage
		}
		dir = fs.Arg(0)
	case "path":
		dir = filepath.Join(orDefault(*dataDir), "extension")
	default:
		fmt.Fprint(stderr, extensionUsage)
		return errUsage
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := extension.Install(abs); err != nil {
		return err
	}
	if args[0] == "path" {
		fmt.Fprintln(stdout, abs)
		return nil
	}
	fmt.Fprintf(stdout, "chromegate extension %s written to %s (id %s)\n", extension.Version(), abs, extension.ID())
	fmt.Fprintln(stdout, "Load it: chrome://extensions → Developer mode → Load unpacked → choose that folder.")
	fmt.Fprintln(stdout, "Pair it once: `chromegate pair install` (then restart Chrome), or `chromegate pair code` and enter the code in its options page.")
	return nil
}

func orDefault(dataDir string) string {
	if dataDir != "" {
		return dataDir
	}
	return cdp.DefaultDataDir()
}

const pairUsage = `usage:
  chromegate pair install [--profile-dir DIR]...   register the native-messaging host that hands the extension its pairing
  chromegate pair code                             print a single-use pairing code (valid two minutes) from the running server
  chromegate pair reset                            the kill switch: rotate the token and forget the paired extension
`

func cmdPair(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, pairUsage)
		return errUsage
	}
	fs := flag.NewFlagSet("pair", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, pairUsage) }
	dataDir := fs.String("data-dir", "", "chromegate's data dir (default: "+cdp.DefaultDataDir()+")")
	var profiles listFlag
	fs.Var(&profiles, "profile-dir", "with install: a browser user-data dir to register in (repeatable; default: Chrome's and Chromium's per-user locations)")
	if err := parseArgs(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprint(stderr, pairUsage)
		return errUsage
	}
	dir, err := filepath.Abs(orDefault(*dataDir))
	if err != nil {
		return err
	}
	switch args[0] {
	case "install":
		bin, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find chromegate's own path: %w", err)
		}
		if bin, err = filepath.EvalSymlinks(bin); err != nil {
			return err
		}
		written, err := pairing.InstallNativeHost(pairing.NativeHostInstall{Binary: bin, DataDir: dir, ExtensionID: extension.ID(), ProfileDirs: profiles})
		for _, p := range written {
			fmt.Fprintln(stdout, "registered", pairing.NativeHostName, "in", p)
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, "Restart Chrome: the extension pairs itself whenever `chromegate serve` runs.")
		return nil
	case "code":
		return pairCode(ctx, dir, stdout)
	case "reset":
		return pairReset(dir, stdout)
	}
	fmt.Fprint(stderr, pairUsage)
	return errUsage
}

// pairCode asks the running server for a code, proving it may with the
// token from the handshake file (which only this user can read).
func pairCode(ctx context.Context, dataDir string, stdout io.Writer) error {
	h, err := pairing.ReadHandshake(dataDir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(h.Port)+"/pair/code", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+h.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return errors.New("the server in the handshake file does not answer: is `chromegate serve` running?")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the server refused to mint a code (%s)", resp.Status)
	}
	var got struct{ Code, Port, Expires string }
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		return fmt.Errorf("the server's answer: %w", err)
	}
	fmt.Fprintf(stdout, "port %s\ncode %s\nEnter both in the chromegate extension's options page before %s. The code works once.\n", got.Port, got.Code, got.Expires)
	return nil
}

// pairReset rotates the running server's token with SIGHUP (which also
// forgets the paired extension), or, with no server running, forgets the
// pairing on disk.
func pairReset(dataDir string, stdout io.Writer) error {
	if err := pairing.ForgetPairing(dataDir); err != nil {
		return err
	}
	h, err := pairing.ReadHandshake(dataDir)
	if err != nil || !isChromegate(h.PID) {
		fmt.Fprintln(stdout, "no running server; the paired extension is forgotten and the next `chromegate serve` makes a new token")
		return nil
	}
	if err := signalRotate(h.PID); err != nil {
		return fmt.Errorf("signal the server (pid %d): %w", h.PID, err)
	}
	for range 50 {
		time.Sleep(100 * time.Millisecond)
		if n, err := pairing.ReadHandshake(dataDir); err == nil && n.Token != h.Token {
			fmt.Fprintln(stdout, "token rotated: the extension is disconnected and must pair again")
			return nil
		}
	}
	return fmt.Errorf("the server (pid %d) did not rotate its token within 5 s", h.PID)
}

// isChromegate reports whether pid runs chromegate, so a recycled pid is
// never signalled.
func isChromegate(pid int) bool {
	if pid <= 0 {
		return false
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	return strings.Contains(string(cmdline), "chromegate")
}

// cmdNativeHost is what Chrome runs for the extension (through the launcher
// `pair install` writes): it answers pairing requests on stdin/stdout.
func cmdNativeHost(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("native-host", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "", "chromegate's data dir")
	// Chrome passes the caller's origin (and on Windows a window handle).
	if err := fs.Parse(args); err != nil {
		return err
	}
	caller := ""
	if fs.NArg() > 0 {
		caller = fs.Arg(0)
	}
	return pairing.ServeNativeHost(stdin, stdout, orDefault(*dataDir), caller, extension.ID())
}
