package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// runCompletion prints a completion script for a shell: commands, their
// flags, and session IDs (asked of the host with 'ahp sessions' as the
// user types) where a command takes a session.
func runCompletion(_ context.Context, a *app, pos []string, _ any) error {
	cmds, flags, takesSession := completionData()
	switch pos[0] {
	case "bash":
		return bashCompletion(a.stdout, cmds, flags, takesSession)
	case "zsh":
		// zsh runs bash completion functions through bashcompinit.
		fmt.Fprintln(a.stdout, "#compdef ahp\nautoload -U +X bashcompinit && bashcompinit")
		return bashCompletion(a.stdout, cmds, flags, takesSession)
	case "fish":
		return fishCompletion(a.stdout, cmds, flags, takesSession)
	}
	return usagef("unknown shell %q: bash, zsh or fish", pos[0])
}

// completionData lists the commands, each command's flags (with two
// dashes) and the commands whose first argument is a session.
func completionData() (cmds []string, flags map[string][]string, takesSession []string) {
	flags = map[string][]string{}
	for _, c := range commands {
		cmds = append(cmds, c.name)
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		(&globals{}).register(fs)
		if c.flags != nil {
			c.flags(fs)
		}
		fs.VisitAll(func(f *flag.Flag) { flags[c.name] = append(flags[c.name], "--"+f.Name) })
		if strings.Contains(c.args, "SESSION") {
			takesSession = append(takesSession, c.name)
		}
	}
	cmds = append(cmds, "help", "version")
	return cmds, flags, takesSession
}

func bashCompletion(w io.Writer, cmds []string, flags map[string][]string, takesSession []string) error {
	var cases strings.Builder
	for _, c := range commands {
		fmt.Fprintf(&cases, "    %s) opts=%q ;;\n", c.name, strings.Join(flags[c.name], " "))
	}
	_, err := fmt.Fprintf(w, `# bash completion for ahp; load with: source <(ahp completion bash)
_ahp() {
  local cur="${COMP_WORDS[COMP_CWORD]}" cmd="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      --url|--token) ((i++)) ;;
      -*) ;;
      *) cmd="${COMP_WORDS[i]}"; break ;;
    esac
  done
  if [[ -z "$cmd" ]]; then
    COMPREPLY=($(compgen -W %q -- "$cur"))
    return
  fi
  local opts=""
  case "$cmd" in
%s  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ " %s " == *" $cmd "* ]]; then
    COMPREPLY=($(compgen -W "$(ahp sessions 2>/dev/null | awk 'NR > 1 { print $1 }')" -- "$cur"))
  elif [[ "$cmd" == completion ]]; then
    COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur"))
  fi
}
complete -F _ahp ahp
`, strings.Join(append(cmds, "--url", "--token", "--json", "--version", "--help"), " "), cases.String(), strings.Join(takesSession, " "))
	return err
}

func fishCompletion(w io.Writer, cmds []string, flags map[string][]string, takesSession []string) error {
	var b strings.Builder
	b.WriteString("# fish completion for ahp; load with: ahp completion fish | source\n")
	b.WriteString("complete -c ahp -f\n")
	fmt.Fprintf(&b, "complete -c ahp -n __fish_use_subcommand -l version -d 'print the version'\n")
	fmt.Fprintf(&b, "complete -c ahp -n __fish_use_subcommand -l url -r -d 'host WebSocket URL'\n")
	fmt.Fprintf(&b, "complete -c ahp -n __fish_use_subcommand -l token -r -d 'bearer token'\n")
	for _, name := range cmds {
		help := name
		for _, c := range commands {
			if c.name == name {
				help = c.help
			}
		}
		fmt.Fprintf(&b, "complete -c ahp -n __fish_use_subcommand -a %s -d %s\n", name, fishQuote(help))
	}
	for _, c := range commands {
		for _, f := range flags[c.name] {
			fmt.Fprintf(&b, "complete -c ahp -n '__fish_seen_subcommand_from %s' -l %s\n", c.name, strings.TrimPrefix(f, "--"))
		}
		if slices.Contains(takesSession, c.name) {
			fmt.Fprintf(&b, "complete -c ahp -n '__fish_seen_subcommand_from %s' -a \"(ahp sessions 2>/dev/null | awk 'NR > 1 { print \\$1 }')\"\n", c.name)
		}
	}
	b.WriteString("complete -c ahp -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
