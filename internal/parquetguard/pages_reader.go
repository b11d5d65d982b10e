package parquetguard

import "github.com/parquet-go/parquet-go"

// Pages reads the pages of one column chunk of a loaded row group, one at a time: each page is
// released when the next is read or the chunk is closed, and parquet-go's panics are errors.
// The zero Pages is closed.
type Pages struct {
	pages parquet.Pages
	page  parquet.Page
}

// Open closes p and starts reading chunk.
func (p *Pages) Open(chunk parquet.ColumnChunk) error {
	p.Close()
	return Protect(func() error {
		p.pages = chunk.Pages()
		return nil
	})
}

// Next releases the previous page and returns the next one; io.EOF after the last.
func (p *Pages) Next() (parquet.Page, error) {
	p.release()
	err := Protect(func() error {
		var err error
		p.page, err = p.pages.ReadPage()
		return err
	})
	return p.page, err
}

// Close releases the current page and the chunk's reader.
func (p *Pages) Close() {
	p.release()
	if p.pages != nil {
		_ = Protect(p.pages.Close)
		p.pages = nil
	}
}

func (p *Pages) release() {
	if p.page != nil {
		parquet.Release(p.page)
		p.page = nil
	}
}
