//! pytest's marker expressions (`-m "slow and not network"`): whether an item's markers
//! satisfy one, for `[[params.allow_deselect]]` entries with an `expression`.

/// Whether `markers` satisfy `expression` (names, `and`, `or`, `not`, parentheses, as
/// `pytest -m` reads them); a malformed expression matches nothing.
pub fn matches(expression: &str, markers: &[String]) -> bool {
    let tokens: Vec<String> = expression
        .replace('(', " ( ")
        .replace(')', " ) ")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
        markers,
    };
    match parser.or() {
        Some(value) if parser.at == tokens.len() => value,
        _ => false,
    }
}

struct Parser<'a> {
    tokens: &'a [String],
    at: usize,
    markers: &'a [String],
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.tokens.get(self.at).map(String::as_str)
    }

    fn or(&mut self) -> Option<bool> {
        let mut value = self.and()?;
        while self.peek() == Some("or") {
            self.at += 1;
            value |= self.and()?;
        }
        Some(value)
    }

    fn and(&mut self) -> Option<bool> {
        let mut value = self.not()?;
        while self.peek() == Some("and") {
            self.at += 1;
            value &= self.not()?;
        }
        Some(value)
    }

    fn not(&mut self) -> Option<bool> {
        match self.peek()? {
            "not" => {
                self.at += 1;
                self.not().map(|v| !v)
            }
            "(" => {
                self.at += 1;
                let value = self.or()?;
                (self.peek() == Some(")")).then(|| self.at += 1)?;
                Some(value)
            }
            ")" | "and" | "or" => None,
            name => {
                self.at += 1;
                Some(self.markers.iter().any(|m| m == name))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_read_like_pytest_m() {
        let slow = ["slow".to_string()];
        assert!(matches("slow", &slow));
        assert!(!matches("not slow", &slow));
        assert!(matches("slow or network", &slow));
        assert!(!matches("slow and network", &slow));
        assert!(matches("(network or slow) and not flaky", &slow));
        assert!(!matches("slow and", &slow), "malformed matches nothing");
        assert!(!matches("", &slow));
    }
}
