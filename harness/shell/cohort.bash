# Bash completion for `cohort`: commands, their subcommands, Determined's abbreviations (e, t, c, ls)
# and each command's options, read from its own --help so they never drift from it.
# Installed to share/bash-completion/completions/cohort; by hand: `source harness/shell/cohort.bash`.

_cohort_subcommands() {
  case "$1" in
    experiment | e) echo "list ls describe kill pause activate archive unarchive delete" ;;
    task) echo "list ls" ;;
    trial | t) echo "logs describe kill diagnose" ;;
    checkpoint | c) echo "list ls export" ;;
    agent) echo "list ls" ;;
    plugin) echo "info check" ;;
  esac
}

_cohort() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local commands="run launch submit experiment task trial checkpoint agent orchestrator plugin report doctor keygen version help"
  if ((COMP_CWORD == 1)); then
    mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
    return
  fi
  local command=${COMP_WORDS[1]}
  local subcommands
  subcommands=$(_cohort_subcommands "$command")
  if ((COMP_CWORD == 2)) && [[ -n $subcommands && $cur != -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$subcommands" -- "$cur")
    return
  fi
  if [[ $cur == -* ]]; then
    local asked=("$command")
    [[ -n $subcommands && ${COMP_WORDS[2]} != -* ]] && asked+=("${COMP_WORDS[2]}")
    local options
    options=$("${COMP_WORDS[0]}" "${asked[@]}" --help 2>/dev/null |
      grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
    mapfile -t COMPREPLY < <(compgen -W "$options --help" -- "$cur")
    return
  fi
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

complete -o filenames -F _cohort cohort
