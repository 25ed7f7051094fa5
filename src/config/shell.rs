//! Just enough of a POSIX shell to read RL launch scripts: the words of each command with their
//! line, after quotes, backslash-newline continuations, comments and the variable expansions
//! such scripts use (`$x`, `${x}`, `${x:-default}`, `$((a * b))`).
//!
//! veRL's recipes set their levers as shell variables and pass them as Hydra overrides
//! (`max_response_length=$((1024 * 20))` … `data.max_response_length=${max_response_length}`,
//! verl-project/verl `recipe/dapo/run_dapo_qwen2.5_32b.sh`), so an importer that only read
//! literal `key=value` words would miss most of a real script. The process environment is never
//! read: the same file gives the same run on every machine. A variable the file never assigns
//! stays unresolved and the importer says so when a priced key needs it.

use std::collections::BTreeMap;

/// Longest word an expansion may produce: 1 MiB. Real scripts' words are paths and numbers; a
/// file that doubles a variable over and over would otherwise grow without bound.
pub const MAX_WORD_BYTES: usize = 1 << 20;

/// Most text all of a script's words may hold together: 16 MiB.
pub const MAX_WORDS_BYTES: usize = 16 << 20;

/// Shell variables the file assigned: name → (value, whether the value is fully resolved).
pub type Variables = BTreeMap<String, (String, bool)>;

/// One word of a command, after quote removal and expansion.
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    /// The expanded text.
    pub text: String,
    /// 1-based line where the word starts.
    pub line: usize,
    /// Whether an expansion in it referred to a variable the file does not assign (or a command
    /// substitution): the text then holds the unexpanded reference.
    pub unresolved: bool,
    /// The command it belongs to: words of one command share the number, which grows at every
    /// separator (a newline that is not continued, `;`, `|`, `&`).
    pub command: usize,
}

/// A word that could not be read (an unterminated quote or expansion), with its line.
#[derive(Debug, Clone, PartialEq)]
pub struct ShellError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The words of a script, in order, with shell variable assignments (`name=value`, `export
/// name=value`) applied to later expansions. Assignments themselves are returned as words too.
pub fn words(text: &str) -> Result<Vec<Word>, ShellError> {
    let mut variables: Variables = BTreeMap::new();
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let mut at_command_start = true;
    let mut command = 0usize;
    let mut total_bytes = 0usize;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
                at_command_start = true;
                command += 1;
            }
            ';' | '|' | '&' => {
                i += 1;
                at_command_start = true;
                command += 1;
            }
            ' ' | '\t' | '\r' => i += 1,
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                line += 1;
                i += 2;
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            _ => {
                let start_line = line;
                let (word, unresolved, next, lines) = read_word(&chars, i, start_line, &variables)?;
                i = next;
                line += lines;
                total_bytes += word.len();
                if total_bytes > MAX_WORDS_BYTES {
                    return Err(ShellError {
                        line: start_line,
                        message: format!(
                            "the script's words expand to more than {MAX_WORDS_BYTES} bytes; give the launch script itself"
                        ),
                    });
                }
                if let Some((name, value)) = assignment(&word)
                    && (at_command_start || out.last().is_some_and(|w: &Word| w.text == "export"))
                {
                    variables.insert(name.to_string(), (value.to_string(), !unresolved));
                }
                at_command_start =
                    word == "export" || (at_command_start && assignment(&word).is_some());
                out.push(Word {
                    text: word,
                    line: start_line,
                    unresolved,
                    command,
                });
            }
        }
    }
    Ok(out)
}

/// `name=value` when `name` is a shell identifier (no dots: `a.b=c` is a Hydra override).
fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let mut name_chars = name.chars();
    let first = name_chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && name_chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some((name, value))
}

/// The error for a word past [`MAX_WORD_BYTES`].
const TOO_LONG: &str = "a word expands to more than 1 MiB (a variable doubled over and over?); give the launch script itself";

/// Reads one word starting at `i`: returns its text, whether it holds an unresolved reference,
/// the index after it and the newlines it spanned.
fn read_word(
    chars: &[char],
    mut i: usize,
    line: usize,
    variables: &Variables,
) -> Result<(String, bool, usize, usize), ShellError> {
    let mut word = PartialWord {
        text: String::new(),
        unresolved: false,
        lines: 0,
        line,
    };
    while i < chars.len() {
        match chars[i] {
            ' ' | '\t' | '\r' | '\n' | ';' | '|' | '&' => break,
            '\\' => {
                match chars.get(i + 1) {
                    Some('\n') => word.lines += 1,
                    Some(&c) => word.text.push(c),
                    None => {}
                }
                i += 2;
            }
            '\'' => {
                let close = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '\'')
                    .ok_or_else(|| word.error("a single quote is never closed"))?;
                let quoted: String = chars[i + 1..i + 1 + close].iter().collect();
                word.lines += quoted.matches('\n').count();
                word.text.push_str(&quoted);
                i += close + 2;
            }
            '"' => i = word.double_quoted(chars, i + 1, variables)?,
            '$' => i = word.expand(chars, i, variables)?,
            c => {
                word.text.push(c);
                i += 1;
            }
        }
    }
    Ok((word.text, word.unresolved, i, word.lines))
}

/// A shell word being read: its text so far, whether a variable in it was unresolved, and the
/// lines it has spanned past `line`, where it started.
struct PartialWord {
    text: String,
    unresolved: bool,
    lines: usize,
    line: usize,
}

impl PartialWord {
    /// An error at the line the word has reached.
    fn error(&self, message: &str) -> ShellError {
        ShellError {
            line: self.line + self.lines,
            message: message.to_string(),
        }
    }

    /// Appends the expansion of the `$…` at `i`; the index after it.
    fn expand(
        &mut self,
        chars: &[char],
        i: usize,
        variables: &Variables,
    ) -> Result<usize, ShellError> {
        let (value, ok, next) = expand(chars, i, variables).map_err(|m| self.error(&m))?;
        self.unresolved |= !ok;
        self.text.push_str(&value);
        if self.text.len() > MAX_WORD_BYTES {
            return Err(self.error(TOO_LONG));
        }
        Ok(next)
    }

    /// Appends a double-quoted string whose text starts at `i` (after the opening quote):
    /// backslash escapes of `"`, `\`, `$` and `` ` ``, line continuations, expansions; the index
    /// after the closing quote.
    fn double_quoted(
        &mut self,
        chars: &[char],
        mut i: usize,
        variables: &Variables,
    ) -> Result<usize, ShellError> {
        loop {
            match chars.get(i) {
                None => return Err(self.error("a double quote is never closed")),
                Some('"') => return Ok(i + 1),
                Some('\\') if matches!(chars.get(i + 1), Some('"' | '\\' | '$' | '`')) => {
                    self.text.push(chars[i + 1]);
                    i += 2;
                }
                Some('\\') if chars.get(i + 1) == Some(&'\n') => {
                    self.lines += 1;
                    i += 2;
                }
                Some('$') => i = self.expand(chars, i, variables)?,
                Some(&c) => {
                    if c == '\n' {
                        self.lines += 1;
                    }
                    self.text.push(c);
                    i += 1;
                }
            }
        }
    }
}

/// Expands the `$…` at `i`: (text, resolved, index after).
fn expand(
    chars: &[char],
    i: usize,
    variables: &Variables,
) -> Result<(String, bool, usize), String> {
    let rest = &chars[i + 1..];
    if rest.starts_with(&['(', '(']) {
        return expand_arithmetic(chars, i, variables);
    }
    // $( command ) and `command`: never run
    if rest.first() == Some(&'(') {
        let close = rest
            .iter()
            .position(|&c| c == ')')
            .ok_or("a `$(` command substitution is never closed")?;
        let body: String = rest[..=close].iter().collect();
        return Ok((format!("${body}"), false, i + 2 + close));
    }
    if rest.first() == Some(&'{') {
        return expand_braced(rest, i, variables);
    }
    // $name
    let length = rest
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
        .count();
    if length == 0 {
        // `$@`, `$1`, a lone `$`: kept as written.
        let taken = usize::from(rest.first().is_some_and(|c| "@*#?0123456789".contains(*c)));
        let text: String = chars[i..i + 1 + taken].iter().collect();
        return Ok((text, taken == 0, i + 1 + taken));
    }
    let name: String = rest[..length].iter().collect();
    Ok(match variables.get(&name) {
        Some((v, ok)) => (v.clone(), *ok, i + 1 + length),
        None => (format!("${name}"), false, i + 1 + length),
    })
}

/// `$(( arithmetic ))` starting at `chars[i]` (the `$`): its value, whether it resolved, and
/// the index after it ([`arithmetic`]; unresolved expressions are kept as written).
fn expand_arithmetic(
    chars: &[char],
    i: usize,
    variables: &Variables,
) -> Result<(String, bool, usize), String> {
    let body_start = i + 3;
    let mut depth = 2;
    let mut j = body_start;
    while j < chars.len() {
        match chars[j] {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        j += 1;
    }
    if j >= chars.len() || chars[j - 1] != ')' {
        return Err("a `$((` arithmetic expansion is never closed".to_string());
    }
    let body: String = chars[body_start..j - 1].iter().collect();
    Ok(match arithmetic(&body, variables) {
        Some(value) => (value.to_string(), true, j + 1),
        None => (format!("$(({body}))"), false, j + 1),
    })
}

/// `${name}`, `${name:-default}`, `${name-default}`, `${name:=default}`, `${name:?message}`:
/// `rest` is what follows the `$` at index `i`. Its value, whether it resolved, and the index
/// after the closing brace.
fn expand_braced(
    rest: &[char],
    i: usize,
    variables: &Variables,
) -> Result<(String, bool, usize), String> {
    // The matching brace: defaults may hold expansions of their own (`${a:-"${HOME}/x"}`).
    let mut depth = 0usize;
    let close = rest
        .iter()
        .position(|&c| {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            depth == 0
        })
        .ok_or("a `${` expansion is never closed")?;
    let body: String = rest[1..close].iter().collect();
    let next = i + 2 + close;
    let name_end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    let (name, operator) = body.split_at(name_end);
    let value = variables.get(name);
    let default = operator
        .strip_prefix(":-")
        .or_else(|| operator.strip_prefix(":="))
        .or_else(|| operator.strip_prefix('-'))
        .or_else(|| operator.strip_prefix('='));
    Ok(match (value, default) {
        (Some((v, ok)), _) if !v.is_empty() || operator.is_empty() => (v.clone(), *ok, next),
        // Defaults nest (`${a:-${b:-…}}`) and each level recurses: deep nesting is left
        // unresolved rather than allowed to exhaust the stack.
        (_, Some(default)) if default.matches('$').count() > 64 => {
            (format!("${{{body}}}"), false, next)
        }
        (_, Some(default)) => {
            let default: Vec<char> = default.chars().collect();
            let (text, unresolved, _, _) =
                read_word(&default, 0, 0, variables).unwrap_or((String::new(), true, 0, 0));
            (text, !unresolved, next)
        }
        _ => (format!("${{{body}}}"), false, next),
    })
}

/// Integer arithmetic of `$(( … ))`: + - * / % and parentheses over integers and variables
/// (with or without `$`). None when a variable is unknown or the expression is malformed.
pub fn arithmetic(expression: &str, variables: &Variables) -> Option<i64> {
    arithmetic_at_depth(expression, variables, 0)
}

/// How deep variables may refer to variables inside an arithmetic expansion (bash itself stops
/// at 1024; a self-reference such as `a=a` would otherwise recurse until the stack overflows,
/// found by fuzzing).
const MAX_ARITHMETIC_DEPTH: usize = 32;

fn arithmetic_at_depth(expression: &str, variables: &Variables, depth: usize) -> Option<i64> {
    // Parentheses and unary minus recurse too: bounded the same way.
    let nesting = expression.matches('(').count() + expression.matches('-').count();
    if depth > MAX_ARITHMETIC_DEPTH || expression.len() > 10_000 || nesting > 256 {
        return None;
    }
    let tokens = arithmetic_tokens(expression, variables, depth)?;
    let mut at = 0;
    let value = sum(&tokens, &mut at)?;
    (at == tokens.len()).then_some(value)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    Number(i64),
    Operator(char),
}

fn arithmetic_tokens(text: &str, variables: &Variables, depth: usize) -> Option<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let length = chars[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            let digits: String = chars[i..i + length].iter().collect();
            tokens.push(Token::Number(digits.parse().ok()?));
            i += length;
        } else if c == '$' || c == '{' || c == '}' {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let length = chars[i..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                .count();
            let name: String = chars[i..i + length].iter().collect();
            let (value, _) = variables.get(&name)?;
            tokens.push(Token::Number(arithmetic_at_depth(
                value,
                variables,
                depth + 1,
            )?));
            i += length;
        } else if "+-*/%()".contains(c) {
            tokens.push(Token::Operator(c));
            i += 1;
        } else {
            return None;
        }
    }
    Some(tokens)
}

fn sum(tokens: &[Token], at: &mut usize) -> Option<i64> {
    let mut value = product(tokens, at)?;
    while let Some(Token::Operator(op @ ('+' | '-'))) = tokens.get(*at) {
        *at += 1;
        let right = product(tokens, at)?;
        value = if *op == '+' {
            value.checked_add(right)?
        } else {
            value.checked_sub(right)?
        };
    }
    Some(value)
}

fn product(tokens: &[Token], at: &mut usize) -> Option<i64> {
    let mut value = atom(tokens, at)?;
    while let Some(Token::Operator(op @ ('*' | '/' | '%'))) = tokens.get(*at) {
        *at += 1;
        let right = atom(tokens, at)?;
        value = match op {
            '*' => value.checked_mul(right)?,
            '/' => value.checked_div(right)?,
            _ => value.checked_rem(right)?,
        };
    }
    Some(value)
}

fn atom(tokens: &[Token], at: &mut usize) -> Option<i64> {
    match tokens.get(*at)? {
        Token::Number(n) => {
            *at += 1;
            Some(*n)
        }
        Token::Operator('-') => {
            *at += 1;
            atom(tokens, at).map(|v| -v)
        }
        Token::Operator('(') => {
            *at += 1;
            let value = sum(tokens, at)?;
            (tokens.get(*at) == Some(&Token::Operator(')'))).then(|| *at += 1)?;
            Some(value)
        }
        Token::Operator(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(script: &str) -> Vec<(String, usize)> {
        words(script)
            .unwrap()
            .into_iter()
            .map(|w| (w.text, w.line))
            .collect()
    }

    #[test]
    fn continuations_quotes_and_comments() {
        let script = "# comment\npython3 -m verl.trainer.main_ppo \\\n  data.train_batch_size=512 \\\n  trainer.logger='[\"console\",\"wandb\"]' # trailing\n";
        assert_eq!(
            texts(script),
            vec![
                ("python3".to_string(), 2),
                ("-m".to_string(), 2),
                ("verl.trainer.main_ppo".to_string(), 2),
                ("data.train_batch_size=512".to_string(), 3),
                ("trainer.logger=[\"console\",\"wandb\"]".to_string(), 4),
            ]
        );
    }

    #[test]
    fn variables_defaults_and_arithmetic_as_in_the_dapo_recipe() {
        // The shape of verl-project/verl recipe/dapo/run_dapo_qwen2.5_32b.sh.
        let script = "max_response_length=$((1024 * 20))\ntrain_prompt_bsz=512\ngen_prompt_bsz=$((train_prompt_bsz * 3))\nMODEL_PATH=${MODEL_PATH:-\"Qwen/Qwen2.5-32B\"}\npython3 x data.max_response_length=${max_response_length} data.gen_batch_size=${gen_prompt_bsz} actor_rollout_ref.model.path=\"${MODEL_PATH}\" data.train_files=\"$HOME/x\"\n";
        let w = words(script).unwrap();
        let find = |prefix: &str| w.iter().find(|w| w.text.starts_with(prefix)).unwrap();
        assert_eq!(
            find("data.max_response_length=").text,
            "data.max_response_length=20480"
        );
        assert_eq!(
            find("data.gen_batch_size=").text,
            "data.gen_batch_size=1536"
        );
        assert_eq!(
            find("actor_rollout_ref.model.path=").text,
            "actor_rollout_ref.model.path=Qwen/Qwen2.5-32B"
        );
        let files = find("data.train_files=");
        assert!(files.unresolved, "$HOME is not read from the environment");
        assert_eq!(files.line, 5);
    }

    #[test]
    fn arithmetic_follows_precedence_and_refuses_unknowns() {
        let vars: Variables = [("a".to_string(), ("6".to_string(), true))].into();
        assert_eq!(arithmetic("2 + 3 * 4", &vars), Some(14));
        assert_eq!(arithmetic("(2 + 3) * $a / 4", &vars), Some(7));
        assert_eq!(arithmetic("a % 4 - -1", &vars), Some(3));
        assert_eq!(arithmetic("b * 2", &vars), None);
        assert_eq!(arithmetic("1 / 0", &vars), None);
        // A variable that refers to itself ends, unresolved (a fuzzer found the overflow).
        let looping: Variables = [("a".to_string(), ("a + 1".to_string(), true))].into();
        assert_eq!(arithmetic("a", &looping), None);
    }

    #[test]
    fn doubling_variables_stop_at_the_word_limit() {
        // 30 doublings of 25 bytes would be 25 GiB; the reader stops at 1 MiB.
        let mut script = String::from("a=xxxxxxxxxxxxxxxxxxxxxxxxx\n");
        for _ in 0..30 {
            script.push_str("a=$a$a\n");
        }
        let e = words(&script).unwrap_err();
        assert!(e.message.contains("1 MiB"), "{e:?}");
    }

    #[test]
    fn unterminated_quotes_name_their_line() {
        let error = words("a=1\nx 'open\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(error.message.contains("single quote"));
    }
}
