package sql

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// statementKeywords is what may start a statement.
var statementKeywords = []string{
	"VACUUM", "SET", "RESET", "ALTER TABLE", "SHOW TBLPROPERTIES", "SHOW TABLES", "DESCRIBE HISTORY", "DESCRIBE DETAIL",
	"INSPECT", "EXPLAIN VACUUM",
}

// Table formats that may precede a backquoted path.
var (
	vacuumFormats    = []string{"delta"}
	inventoryFormats = []string{"delta", "parquet", "csv", "json"}
)

// Parse parses a single statement. A trailing semicolon and comments are allowed;
// a second statement is a syntax error.
//
// Errors are a *SyntaxError, an *UnknownStatementError, a *DuplicateClauseError or
// a *DuplicateKeyError.
func Parse(stmt string) (Statement, error) {
	toks, err := lex(stmt)
	if err != nil {
		return nil, err
	}
	stmts := splitTokens(stmt, toks)
	if len(stmts) == 0 {
		t := eofToken(stmt)
		return nil, &SyntaxError{Position: position(stmt, t.pos), Unexpected: t.display(), Expected: []string{"a statement"}}
	}
	s, err := parseStatement(stmt, stmts[0])
	if err != nil {
		return nil, err
	}
	if len(stmts) > 1 {
		t := stmts[1].toks[0]
		return nil, &SyntaxError{Position: position(stmt, t.pos), Unexpected: t.display(), Expected: []string{endOfInput}}
	}
	return s, nil
}

// ParseScript parses the statements of a script, separated by semicolons.
// Semicolons in string literals, backquoted identifiers and comments do not
// separate statements, and empty statements are skipped. The first error stops
// the parse; its position is relative to the whole script. Errors are of the types
// Parse returns.
func ParseScript(script string) ([]Statement, error) {
	toks, err := lex(script)
	if err != nil {
		return nil, err
	}
	var stmts []Statement
	for _, st := range splitTokens(script, toks) {
		s, err := parseStatement(script, st)
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, s)
	}
	return stmts, nil
}

// Split returns the source text of each statement of a script, as ParseScript
// separates them, without the separating semicolons and surrounding blanks and
// comments: Split(script)[i] is the text of ParseScript(script)[i]. It checks only
// that literals and comments are terminated.
func Split(script string) ([]string, error) {
	toks, err := lex(script)
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, st := range splitTokens(script, toks) {
		texts = append(texts, script[st.toks[0].pos:st.toks[len(st.toks)-1].end])
	}
	return texts, nil
}

// stmtTokens are the tokens of one statement and the token that ends it, a
// semicolon or the end of input.
type stmtTokens struct {
	toks []token
	end  token
}

func eofToken(src string) token {
	return token{kind: tokEOF, pos: len(src), end: len(src)}
}

// splitTokens splits toks at semicolons, dropping empty statements.
func splitTokens(src string, toks []token) []stmtTokens {
	var stmts []stmtTokens
	start := 0
	for i, t := range toks {
		if t.kind != tokSemi {
			continue
		}
		if i > start {
			stmts = append(stmts, stmtTokens{toks: toks[start:i], end: t})
		}
		start = i + 1
	}
	if start < len(toks) {
		stmts = append(stmts, stmtTokens{toks: toks[start:], end: eofToken(src)})
	}
	return stmts
}

// parser parses the tokens of one statement.
type parser struct {
	src  string
	toks []token
	end  token
	i    int
	// semErr is the first error found in a syntactically valid statement, such as a
	// duplicate clause; like Spark, the parser reports it only if there is no syntax
	// error.
	semErr error
	// depth is the nesting depth of the expression being parsed.
	depth int
}

// maxDepth bounds the nesting of parentheses and NOTs in an expression, so that
// parsing, printing and evaluating cannot exhaust the stack.
const maxDepth = 1000

func parseStatement(src string, st stmtTokens) (Statement, error) {
	p := &parser{src: src, toks: st.toks, end: st.end}
	s, err := p.statement()
	if err != nil {
		return nil, err
	}
	if p.semErr != nil {
		return nil, p.semErr
	}
	return s, nil
}

func (p *parser) peek() token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return p.end
}

func (p *parser) next() token {
	t := p.peek()
	if p.i < len(p.toks) {
		p.i++
	}
	return t
}

func (p *parser) atEnd() bool { return p.i >= len(p.toks) }

func isKeyword(t token, kw string) bool {
	return t.kind == tokWord && strings.EqualFold(t.text, kw)
}

func isPunct(t token, s string) bool {
	return t.kind == tokPunct && t.text == s
}

// accept consumes the next token if it is the keyword kw.
func (p *parser) accept(kw string) bool {
	if isKeyword(p.peek(), kw) {
		p.i++
		return true
	}
	return false
}

// acceptPunct consumes the next token if it is the punctuation s.
func (p *parser) acceptPunct(s string) bool {
	if isPunct(p.peek(), s) {
		p.i++
		return true
	}
	return false
}

// expect consumes the keyword kw or fails.
func (p *parser) expect(kw string) error {
	if !p.accept(kw) {
		return p.unexpected(kw)
	}
	return nil
}

// expectEnd fails unless the statement has no more tokens; expected lists what else
// could have come.
func (p *parser) expectEnd(expected ...string) error {
	if !p.atEnd() {
		return p.unexpected(append(expected, "end of statement")...)
	}
	return nil
}

// unexpected returns a syntax error at the next token. At the end of a statement
// with an unclosed parenthesis, the error is the parenthesis.
func (p *parser) unexpected(expected ...string) *SyntaxError {
	t := p.peek()
	if p.atEnd() {
		if open, ok := p.unclosedParen(); ok {
			return p.errorAt(open, "unclosed '('")
		}
	}
	return &SyntaxError{Position: position(p.src, t.pos), Unexpected: t.display(), Expected: expected}
}

// unclosedParen returns the innermost '(' of the statement without a matching ')'.
func (p *parser) unclosedParen() (token, bool) {
	var open []token
	for _, t := range p.toks {
		switch {
		case isPunct(t, "("):
			open = append(open, t)
		case isPunct(t, ")") && len(open) > 0:
			open = open[:len(open)-1]
		}
	}
	if len(open) == 0 {
		return token{}, false
	}
	return open[len(open)-1], true
}

func (p *parser) errorAt(t token, msg string) *SyntaxError {
	return &SyntaxError{Position: position(p.src, t.pos), Msg: msg}
}

// semantic records err if it is the first semantic error.
func (p *parser) semantic(err error) {
	if p.semErr == nil {
		p.semErr = err
	}
}

func (p *parser) statement() (Statement, error) {
	t := p.peek()
	if t.kind != tokWord {
		return nil, p.unexpected(statementKeywords...)
	}
	switch strings.ToUpper(t.text) {
	case "VACUUM":
		return p.vacuum()
	case "SET":
		return p.set()
	case "RESET":
		return p.reset()
	case "ALTER":
		return p.alterTable()
	case "SHOW":
		return p.showTblProperties()
	case "DESCRIBE", "DESC":
		return p.describe()
	case "INSPECT":
		return p.inspect()
	case "EXPLAIN":
		return p.explain()
	}
	return nil, p.unknownStatement(t.text)
}

func (p *parser) unknownStatement(words string) error {
	return &UnknownStatementError{Position: position(p.src, p.toks[0].pos), Statement: words}
}

// vacuum parses VACUUM table [LITE|FULL] [USING INVENTORY inv] [RETAIN n HOURS] [DRY RUN].
func (p *parser) vacuum() (Statement, error) {
	p.next()
	table, err := p.tableRef(vacuumFormats)
	if err != nil {
		return nil, err
	}
	s := &Vacuum{Table: table}
	var seenMode, seenInventory, seenRetain, seenDryRun bool
	// once reports whether the clause starting at t is new, and records a
	// duplicate otherwise.
	once := func(seen *bool, t token, clause string) bool {
		if *seen {
			p.semantic(&DuplicateClauseError{Position: position(p.src, t.pos), Clause: clause})
			return false
		}
		*seen = true
		return true
	}
	for !p.atEnd() {
		t := p.next()
		switch {
		case isKeyword(t, "LITE"), isKeyword(t, "FULL"):
			if once(&seenMode, t, "LITE/FULL") {
				s.Mode = strings.ToUpper(t.text)
			}
		case isKeyword(t, "USING"):
			if err := p.expect("INVENTORY"); err != nil {
				return nil, err
			}
			inv, err := p.inventory()
			if err != nil {
				return nil, err
			}
			if once(&seenInventory, t, "USING INVENTORY") {
				s.Inventory = inv
			}
		case isKeyword(t, "RETAIN"):
			n, err := p.number()
			if err != nil {
				return nil, err
			}
			if !p.accept("HOURS") && !p.accept("HOUR") {
				return nil, p.unexpected("HOURS")
			}
			if once(&seenRetain, t, "RETAIN") {
				s.Retain = &n
			}
		case isKeyword(t, "DRY"):
			if err := p.expect("RUN"); err != nil {
				return nil, err
			}
			once(&seenDryRun, t, "DRY RUN")
			s.DryRun = true
		default:
			p.i--
			return nil, p.unexpected("RETAIN", "DRY RUN", "LITE", "FULL", "USING INVENTORY", "end of statement")
		}
	}
	return s, nil
}

// number parses an optionally signed numeric literal.
func (p *parser) number() (Number, error) {
	sign := ""
	if t := p.peek(); isPunct(t, "-") || isPunct(t, "+") {
		sign = p.next().text
	}
	t := p.peek()
	if t.kind != tokNumber {
		return Number{}, p.unexpected("a number")
	}
	p.next()
	text := sign + t.text
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return Number{}, p.errorAt(t, "number out of range: "+t.display())
	}
	return Number{Text: text, Float: f}, nil
}

// isNameToken reports whether t can be a part of a name.
func isNameToken(t token) bool {
	return t.kind == tokWord || t.kind == tokIdent || t.kind == tokNumber && isIdentText(t.text)
}

func nameValue(t token) string {
	if t.kind == tokIdent {
		return t.val
	}
	return t.text
}

// tableRef parses a table name, a quoted path, or format.`path` with format one of
// formats.
func (p *parser) tableRef(formats []string) (TableRef, error) {
	first := p.peek()
	if first.kind == tokString {
		p.next()
		if first.val == "" {
			return TableRef{}, p.errorAt(first, "empty path")
		}
		return TableRef{Path: first.val}, nil
	}
	if !isNameToken(first) {
		return TableRef{}, p.unexpected("a table name or path")
	}
	var parts []token
	for {
		parts = append(parts, p.next())
		if !isPunct(p.peek(), ".") {
			break
		}
		p.next()
		if !isNameToken(p.peek()) {
			return TableRef{}, p.unexpected("an identifier")
		}
	}
	if len(parts) == 2 && parts[1].kind == tokIdent && slices.Contains(inventoryFormats, strings.ToLower(nameValue(parts[0]))) {
		format := strings.ToLower(nameValue(parts[0]))
		if !slices.Contains(formats, format) {
			return TableRef{}, p.errorAt(first, fmt.Sprintf("format '%s' is not allowed here, only %s", format, orList(formats)))
		}
		if parts[1].val == "" {
			return TableRef{}, p.errorAt(parts[1], "empty path")
		}
		return TableRef{Path: parts[1].val, Format: format}, nil
	}
	if len(parts) > 3 {
		return TableRef{}, p.errorAt(first, "table name has more than three parts")
	}
	name := make([]string, len(parts))
	for i, t := range parts {
		if name[i] = nameValue(t); name[i] == "" {
			return TableRef{}, p.errorAt(t, "empty identifier")
		}
	}
	return TableRef{Name: name}, nil
}

// inventory parses the inventory of USING INVENTORY: a table or (query).
func (p *parser) inventory() (*Inventory, error) {
	if p.acceptPunct("(") {
		q, err := p.query()
		if err != nil {
			return nil, err
		}
		if !p.acceptPunct(")") {
			if q.Where == nil {
				return nil, p.unexpected("WHERE", "')'")
			}
			return nil, p.unexpected("AND", "OR", "')'")
		}
		return &Inventory{Query: q}, nil
	}
	if t := p.peek(); t.kind != tokString && !isNameToken(t) {
		return nil, p.unexpected("'('", "a table name or path")
	}
	table, err := p.tableRef(inventoryFormats)
	if err != nil {
		return nil, err
	}
	return &Inventory{Table: &table}, nil
}

// query parses SELECT * | column, ... FROM table [WHERE condition].
func (p *parser) query() (*Query, error) {
	if err := p.expect("SELECT"); err != nil {
		return nil, err
	}
	q := &Query{}
	if !p.acceptPunct("*") {
		expected := []string{"'*'", "a column name"}
		for {
			name, err := p.columnName(expected...)
			if err != nil {
				return nil, err
			}
			q.Columns = append(q.Columns, name)
			if !p.acceptPunct(",") {
				break
			}
			expected = []string{"a column name"}
		}
	}
	if !p.accept("FROM") {
		if q.Columns == nil {
			return nil, p.unexpected("FROM")
		}
		return nil, p.unexpected("','", "FROM")
	}
	from, err := p.tableRef(inventoryFormats)
	if err != nil {
		return nil, err
	}
	q.From = from
	if p.accept("WHERE") {
		if q.Where, err = p.orExpr(); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// columnName parses a column name: a backquoted identifier or a word that is not
// reserved.
func (p *parser) columnName(expected ...string) (string, error) {
	t := p.peek()
	if !isNameToken(t) || t.kind == tokWord && isReserved(t.text) {
		return "", p.unexpected(expected...)
	}
	p.next()
	name := nameValue(t)
	if name == "" {
		return "", p.errorAt(t, "empty identifier")
	}
	return name, nil
}

func (p *parser) orExpr() (Expr, error) {
	left, err := p.andExpr()
	if err != nil {
		return nil, err
	}
	for p.accept("OR") {
		right, err := p.andExpr()
		if err != nil {
			return nil, err
		}
		left = &Or{Left: left, Right: right}
	}
	return left, nil
}

func (p *parser) andExpr() (Expr, error) {
	left, err := p.notExpr()
	if err != nil {
		return nil, err
	}
	for p.accept("AND") {
		right, err := p.notExpr()
		if err != nil {
			return nil, err
		}
		left = &And{Left: left, Right: right}
	}
	return left, nil
}

func (p *parser) notExpr() (Expr, error) {
	if isKeyword(p.peek(), "NOT") {
		if err := p.nest(); err != nil {
			return nil, err
		}
		defer p.unnest()
		p.next()
		e, err := p.notExpr()
		if err != nil {
			return nil, err
		}
		return &Not{Expr: e}, nil
	}
	return p.predicate()
}

// nest enters a nested expression at the next token.
func (p *parser) nest() error {
	if p.depth++; p.depth > maxDepth {
		return p.errorAt(p.peek(), "expression nested too deeply")
	}
	return nil
}

func (p *parser) unnest() { p.depth-- }

// predicate parses an operand, optionally followed by a comparison, [NOT] LIKE,
// [NOT] IN or IS [NOT] NULL.
func (p *parser) predicate() (Expr, error) {
	left, err := p.operand()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if op, ok := compareOps[t.text]; ok && t.kind == tokPunct {
		p.next()
		right, err := p.operand()
		if err != nil {
			return nil, err
		}
		return &Comparison{Op: op, Left: left, Right: right}, nil
	}
	not := false
	if isKeyword(t, "NOT") {
		p.next()
		not = true
		t = p.peek()
	}
	switch {
	case isKeyword(t, "LIKE"):
		p.next()
		pt := p.peek()
		if pt.kind != tokString {
			return nil, p.unexpected("a string literal")
		}
		p.next()
		if _, err := compileLike(pt.val); err != nil {
			return nil, p.errorAt(pt, err.Error())
		}
		return &Like{Expr: left, Pattern: pt.val, Not: not}, nil
	case isKeyword(t, "IN"):
		p.next()
		if !p.acceptPunct("(") {
			return nil, p.unexpected("'('")
		}
		in := &In{Expr: left, Not: not}
		for {
			v, err := p.literal()
			if err != nil {
				return nil, err
			}
			in.List = append(in.List, v)
			if p.acceptPunct(")") {
				return in, nil
			}
			if !p.acceptPunct(",") {
				return nil, p.unexpected("','", "')'")
			}
		}
	case not:
		return nil, p.unexpected("LIKE", "IN")
	case isKeyword(t, "IS"):
		p.next()
		not := p.accept("NOT")
		if err := p.expect("NULL"); err != nil {
			return nil, err
		}
		return &IsNull{Expr: left, Not: not}, nil
	}
	return left, nil
}

// operand parses a literal, a column or a parenthesised expression.
func (p *parser) operand() (Expr, error) {
	t := p.peek()
	switch {
	case isPunct(t, "("):
		if err := p.nest(); err != nil {
			return nil, err
		}
		defer p.unnest()
		p.next()
		e, err := p.orExpr()
		if err != nil {
			return nil, err
		}
		if !p.acceptPunct(")") {
			return nil, p.unexpected("AND", "OR", "')'")
		}
		return e, nil
	case t.kind == tokIdent || t.kind == tokWord && !isReserved(t.text):
		name, err := p.columnName()
		if err != nil {
			return nil, err
		}
		return &Column{Name: name}, nil
	case t.kind == tokString || t.kind == tokNumber || isPunct(t, "-") || isPunct(t, "+") ||
		isKeyword(t, "TRUE") || isKeyword(t, "FALSE") || isKeyword(t, "NULL"):
		v, err := p.literal()
		if err != nil {
			return nil, err
		}
		return &Literal{Value: v}, nil
	}
	return nil, p.unexpected("an expression")
}

// literal parses a string, an optionally signed number, TRUE, FALSE or NULL.
func (p *parser) literal() (Value, error) {
	t := p.peek()
	switch {
	case t.kind == tokString:
		p.next()
		return StringValue(t.val), nil
	case t.kind == tokNumber || isPunct(t, "-") || isPunct(t, "+"):
		n, err := p.number()
		if err != nil {
			return Value{}, err
		}
		if i, err := strconv.ParseInt(n.Text, 10, 64); err == nil {
			return IntValue(i), nil
		}
		return FloatValue(n.Float), nil
	case isKeyword(t, "TRUE"), isKeyword(t, "FALSE"):
		p.next()
		return BoolValue(isKeyword(t, "TRUE")), nil
	case isKeyword(t, "NULL"):
		p.next()
		return NullValue(), nil
	}
	return Value{}, p.unexpected("a literal")
}

// set parses SET, SET key and SET key = value.
func (p *parser) set() (Statement, error) {
	p.next()
	if p.atEnd() {
		return &Set{}, nil
	}
	key, err := p.configKey("end of statement")
	if err != nil {
		return nil, err
	}
	if p.atEnd() {
		return &Set{Key: key}, nil
	}
	if !p.acceptPunct("=") {
		return nil, p.unexpected("'='", "end of statement")
	}
	value := ""
	if rest := p.toks[p.i:]; len(rest) == 1 && rest[0].kind == tokString {
		value = rest[0].val
	} else if len(rest) > 0 {
		value = p.src[rest[0].pos:rest[len(rest)-1].end]
	}
	p.i = len(p.toks)
	return &Set{Key: key, Value: &value}, nil
}

// reset parses RESET and RESET key.
func (p *parser) reset() (Statement, error) {
	p.next()
	if p.atEnd() {
		return &Reset{}, nil
	}
	key, err := p.configKey("end of statement")
	if err != nil {
		return nil, err
	}
	if err := p.expectEnd(); err != nil {
		return nil, err
	}
	return &Reset{Key: key}, nil
}

// configKey parses the key of SET or RESET: a backquoted identifier, or a run of
// words, numbers, dots, hyphens and colons without blanks in between, which is read
// as written: spark.databricks.delta.retentionDurationCheck.enabled.
func (p *parser) configKey(expected ...string) (string, error) {
	first := p.peek()
	if first.kind == tokIdent {
		p.next()
		if first.val == "" {
			return "", p.errorAt(first, "empty identifier")
		}
		return first.val, nil
	}
	if first.kind != tokWord && first.kind != tokNumber {
		return "", p.unexpected(append([]string{"a configuration key"}, expected...)...)
	}
	last := p.next()
	for !p.atEnd() {
		t := p.peek()
		if t.pos != last.end || !(t.kind == tokWord || t.kind == tokNumber || isPunct(t, ".") || isPunct(t, "-") || isPunct(t, ":")) {
			break
		}
		last = p.next()
	}
	return p.src[first.pos:last.end], nil
}

// alterTable parses ALTER TABLE ... SET TBLPROPERTIES and ALTER TABLE ... UNSET
// TBLPROPERTIES.
func (p *parser) alterTable() (Statement, error) {
	alter := p.next()
	if t := p.peek(); !isKeyword(t, "TABLE") {
		if t.kind == tokWord {
			return nil, p.unknownStatement(alter.text + " " + t.text)
		}
		return nil, p.unexpected("TABLE")
	}
	p.next()
	table, err := p.tableRef(vacuumFormats)
	if err != nil {
		return nil, err
	}
	var s Statement
	switch {
	case p.accept("SET"):
		if err := p.expect("TBLPROPERTIES"); err != nil {
			return nil, err
		}
		props, err := p.propertyList(true)
		if err != nil {
			return nil, err
		}
		s = &AlterTableSetProperties{Table: table, Properties: props}
	case p.accept("UNSET"):
		if err := p.expect("TBLPROPERTIES"); err != nil {
			return nil, err
		}
		ifExists := false
		if p.accept("IF") {
			if err := p.expect("EXISTS"); err != nil {
				return nil, err
			}
			ifExists = true
		} else if !isPunct(p.peek(), "(") {
			return nil, p.unexpected("IF EXISTS", "'('")
		}
		props, err := p.propertyList(false)
		if err != nil {
			return nil, err
		}
		keys := make([]string, len(props))
		for i, prop := range props {
			keys[i] = prop.Key
		}
		s = &AlterTableUnsetProperties{Table: table, IfExists: ifExists, Keys: keys}
	default:
		return nil, p.unexpected("SET TBLPROPERTIES", "UNSET TBLPROPERTIES")
	}
	if err := p.expectEnd(); err != nil {
		return nil, err
	}
	return s, nil
}

// propertyList parses (key [=] value, ...), or (key, ...) if withValues is false.
func (p *parser) propertyList(withValues bool) ([]Property, error) {
	if !p.acceptPunct("(") {
		return nil, p.unexpected("'('")
	}
	var props []Property
	seen := map[string]bool{}
	for {
		kt := p.peek()
		key, err := p.propertyKey()
		if err != nil {
			return nil, err
		}
		if seen[key] {
			p.semantic(&DuplicateKeyError{Position: position(p.src, kt.pos), Key: key})
		}
		seen[key] = true
		prop := Property{Key: key}
		if withValues {
			hasEq := p.acceptPunct("=")
			if prop.Value, err = p.propertyValue(hasEq); err != nil {
				return nil, err
			}
		}
		props = append(props, prop)
		if p.acceptPunct(")") {
			return props, nil
		}
		if !p.acceptPunct(",") {
			return nil, p.unexpected("','", "')'")
		}
	}
}

// propertyKey parses a string literal or a dotted name: 'delta.appendOnly',
// delta.appendOnly.
func (p *parser) propertyKey() (string, error) {
	t := p.peek()
	if t.kind == tokString {
		p.next()
		if t.val == "" {
			return "", p.errorAt(t, "empty property key")
		}
		return t.val, nil
	}
	if !isNameToken(t) {
		return "", p.unexpected("a property key")
	}
	var parts []string
	for {
		t := p.next()
		if nameValue(t) == "" {
			return "", p.errorAt(t, "empty identifier")
		}
		parts = append(parts, nameValue(t))
		if !p.acceptPunct(".") {
			return strings.Join(parts, "."), nil
		}
		if !isNameToken(p.peek()) {
			return "", p.unexpected("an identifier")
		}
	}
}

// propertyValue parses a string literal, a number, TRUE or FALSE (lower-cased) or
// another word, kept as written.
func (p *parser) propertyValue(afterEq bool) (string, error) {
	t := p.peek()
	switch {
	case t.kind == tokString:
		p.next()
		return t.val, nil
	case t.kind == tokNumber || isPunct(t, "-") || isPunct(t, "+"):
		n, err := p.number()
		return n.Text, err
	case isKeyword(t, "TRUE"), isKeyword(t, "FALSE"):
		p.next()
		return strings.ToLower(t.text), nil
	case t.kind == tokWord:
		p.next()
		return t.text, nil
	}
	if afterEq {
		return "", p.unexpected("a property value")
	}
	return "", p.unexpected("'='", "a property value")
}

// showTblProperties parses SHOW TBLPROPERTIES table [(key)].
func (p *parser) showTblProperties() (Statement, error) {
	show := p.next()
	if isKeyword(p.peek(), "TABLES") {
		return p.showTables()
	}
	if t := p.peek(); !isKeyword(t, "TBLPROPERTIES") {
		if t.kind == tokWord {
			return nil, p.unknownStatement(show.text + " " + t.text)
		}
		return nil, p.unexpected("TBLPROPERTIES")
	}
	p.next()
	table, err := p.tableRef(vacuumFormats)
	if err != nil {
		return nil, err
	}
	s := &ShowTblProperties{Table: table}
	if !p.acceptPunct("(") {
		if err := p.expectEnd("'('"); err != nil {
			return nil, err
		}
		return s, nil
	}
	if s.Key, err = p.propertyKey(); err != nil {
		return nil, err
	}
	if !p.acceptPunct(")") {
		return nil, p.unexpected("')'")
	}
	if err := p.expectEnd(); err != nil {
		return nil, err
	}
	return s, nil
}

// showTables parses SHOW TABLES [(IN|FROM) schema].
func (p *parser) showTables() (Statement, error) {
	p.next()
	s := &ShowTables{}
	if !p.accept("IN") && !p.accept("FROM") {
		return s, p.expectEnd("IN", "FROM")
	}
	t := p.peek()
	if !isNameToken(t) {
		return nil, p.unexpected("a schema name")
	}
	p.next()
	if s.Schema = nameValue(t); s.Schema == "" {
		return nil, p.errorAt(t, "empty identifier")
	}
	if isPunct(p.peek(), ".") {
		return nil, p.errorAt(t, "a schema name has one part (the schema of the lakehouse: SHOW TABLES IN sales)")
	}
	return s, p.expectEnd()
}

// describeKinds are the words after DESCRIBE of Spark statements this package does
// not support, named in the UnknownStatementError.
var describeKinds = []string{
	"TABLE", "EXTENDED", "FORMATTED", "FUNCTION", "DATABASE", "SCHEMA", "NAMESPACE",
	"CATALOG", "QUERY", "CONNECTION", "VOLUME", "EXTERNAL", "PROCEDURE",
}

// describe parses DESCRIBE HISTORY table [LIMIT n] and DESCRIBE DETAIL table.
func (p *parser) describe() (Statement, error) {
	desc := p.next()
	t := p.peek()
	switch {
	case isKeyword(t, "HISTORY"):
		p.next()
		table, err := p.tableRef(vacuumFormats)
		if err != nil {
			return nil, err
		}
		s := &DescribeHistory{Table: table}
		if p.accept("LIMIT") {
			n, err := p.limit()
			if err != nil {
				return nil, err
			}
			s.Limit = &n
		}
		var expected []string
		if s.Limit == nil {
			expected = []string{"LIMIT"}
		}
		if err := p.expectEnd(expected...); err != nil {
			return nil, err
		}
		return s, nil
	case isKeyword(t, "DETAIL"):
		p.next()
		table, err := p.tableRef(vacuumFormats)
		if err != nil {
			return nil, err
		}
		if err := p.expectEnd(); err != nil {
			return nil, err
		}
		return &DescribeDetail{Table: table}, nil
	case t.kind != tokWord:
		return nil, p.unexpected("HISTORY", "DETAIL")
	case slices.Contains(describeKinds, strings.ToUpper(t.text)):
		return nil, p.unknownStatement(desc.text + " " + t.text)
	}
	return nil, p.unknownStatement(desc.text)
}

// limit parses the non-negative integer of LIMIT.
func (p *parser) limit() (int, error) {
	t := p.peek()
	if t.kind != tokNumber || strings.ContainsAny(t.text, ".eE") {
		return 0, p.unexpected("a non-negative integer")
	}
	p.next()
	n, err := strconv.Atoi(t.text)
	if err != nil || n > 1<<31-1 {
		return 0, p.errorAt(t, "LIMIT out of range: "+t.text)
	}
	return n, nil
}
