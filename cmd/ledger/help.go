package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

const exitHelp = `exit status:
  0  ok
  1  problems found (verify), checks or stores failed (reconcile, backfill), an unknown dead letter or one that
     cannot be retried (dead-letters), or the command failed (e.g. a database unreachable)
  2  usage or configuration error: unknown command or flag, bad LEDGER_* value`

// help prints `ledger help` (every command with its flags), or one
// command's usage for `ledger help <command>`.
func help(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stdout)
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			fs, _ := c.flagSet(&environment{})
			fs.SetOutput(stdout)
			fs.Usage()
			return nil
		}
	}
	printUsage(stderr)
	return usageError{fmt.Errorf("help: unknown command %q", args[0])}
}

// printUsage writes the full usage: commands, their flags, exit statuses
// and the variables configuration is read from.
func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: ledger <command> [flags]\n\ncommands:")
	width := len("help")
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	col := 2 + width + 2 // where summaries and flags start
	for _, c := range commands() {
		fs, _ := c.flagSet(&environment{})
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, indent(c.summary, strings.Repeat(" ", col)))
		fs.VisitAll(func(f *flag.Flag) {
			kind, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "%*s--%s\n%*s%s\n", col, "", strings.TrimSpace(f.Name+" "+kind), col+4, "",
				indent(usage, strings.Repeat(" ", col+4)))
		})
	}
	fmt.Fprintf(w, "  %-*s  %s\n", width, "help", "list the commands, or show one: ledger help <command> (same as ledger <command> -h)")
	fmt.Fprintf(w, "\n%s\n\n", exitHelp)
	var c Config
	var names []string
	for _, s := range c.settings() {
		names = append(names, s.name)
	}
	fmt.Fprintf(w, "Configuration is read only from these environment variables (README.md, \"Configuration\"):\n  %s\n",
		wrap(names, 100, "  "))
}

// wrap joins words with spaces into lines of at most width, each after the
// first starting with pad.
func wrap(words []string, width int, pad string) string {
	var b strings.Builder
	line := 0
	for i, w := range words {
		if i > 0 && line+1+len(w) > width {
			b.WriteString("\n" + pad)
			line = 0
		} else if i > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}
