package rules

// Table returns the table name of family fam in rs, or nil when rs has
// none (or is nil: a backend that could not be read).
func (rs *Ruleset) Table(fam Family, name string) *Table {
	if rs == nil {
		return nil
	}
	return find(rs.Tables, func(t *Table) bool { return t.Family == fam && t.Name == name })
}

// Chain returns t's chain name, or nil when t has none or is nil, so a
// lookup can go through a table that may be absent: rs.Table(...).Chain(...).
func (t *Table) Chain(name string) *Chain {
	if t == nil {
		return nil
	}
	return find(t.Chains, func(c *Chain) bool { return c.Name == name })
}

// Set returns t's set name, or nil when t has none or is nil.
func (t *Table) Set(name string) *Set {
	if t == nil {
		return nil
	}
	return find(t.Sets, func(s *Set) bool { return s.Name == name })
}

// find returns the first of items that match accepts, in place (not a
// copy), or nil.
func find[T any](items []T, match func(*T) bool) *T {
	for i := range items {
		if match(&items[i]) {
			return &items[i]
		}
	}
	return nil
}
