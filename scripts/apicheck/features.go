package main

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
)

// features returns the record of p: a sorted line per exported feature.
func features(p *types.Package) []string {
	w := &writer{pkg: p}
	scope := p.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			w.add("const %s %s", name, w.typ(o.Type()))
			w.add("const %s = %s", name, o.Val().ExactString())
		case *types.Var:
			w.add("var %s %s", name, w.typ(o.Type()))
		case *types.Func:
			sig := o.Type().(*types.Signature)
			w.add("func %s%s%s", name, w.typeParams(sig.TypeParams()), w.signature(sig))
		case *types.TypeName:
			w.typeName(o)
		}
	}
	slices.Sort(w.lines)
	return slices.Compact(w.lines)
}

// writer writes the features of one package.
type writer struct {
	pkg   *types.Package
	lines []string
}

func (w *writer) add(format string, args ...any) {
	w.lines = append(w.lines, fmt.Sprintf(format, args...))
}

// typeName adds the features of an exported type: its kind and underlying
// type, its exported fields or interface methods, whether it is comparable,
// and its exported methods with their receivers.
func (w *writer) typeName(o *types.TypeName) {
	name := o.Name()
	if o.IsAlias() {
		w.add("type %s = %s", name, w.typ(o.Type().(*types.Alias).Rhs()))
		return
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		w.add("type %s %s", name, w.typ(o.Type()))
		return
	}
	head := "type " + name + w.typeParams(named.TypeParams())
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.add("%s struct", head)
		w.fields(head, u, map[*types.Struct]bool{})
	case *types.Interface:
		w.iface(head, u)
		return // its methods are in its method set line
	default:
		w.add("%s %s", head, w.typ(u))
	}
	if _, basic := named.Underlying().(*types.Basic); !basic && types.Comparable(named) {
		w.add("%s comparable", head)
	}

	recv := name
	if tp := named.TypeParams(); tp.Len() > 0 {
		var names []string
		for i := range tp.Len() {
			names = append(names, tp.At(i).Obj().Name())
		}
		recv += "[" + strings.Join(names, ", ") + "]"
	}
	values := types.NewMethodSet(named)
	all := types.NewMethodSet(types.NewPointer(named))
	for i := range all.Len() {
		sel := all.At(i)
		m := sel.Obj()
		if !m.Exported() {
			continue
		}
		r := "*" + recv
		if values.Lookup(m.Pkg(), m.Name()) != nil {
			r = recv
		}
		w.add("method (%s) %s%s", r, m.Name(), w.signature(sel.Type().(*types.Signature)))
	}
}

// fields adds the exported fields of struct s, with those promoted from
// its embedded structs of unexported types, which are reachable only so.
func (w *writer) fields(head string, s *types.Struct, seen map[*types.Struct]bool) {
	if seen[s] {
		return
	}
	seen[s] = true
	for i := range s.NumFields() {
		f := s.Field(i)
		switch {
		case f.Embedded() && f.Exported():
			w.add("%s struct, embedded %s", head, w.typ(f.Type()))
		case f.Embedded():
			t := f.Type()
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			if es, ok := t.Underlying().(*types.Struct); ok {
				w.fields(head, es, seen)
			}
		case f.Exported():
			w.add("%s struct, %s %s", head, f.Name(), w.typ(f.Type()))
		}
	}
}

// iface adds an interface: its method set on one line (so that a method
// added to it changes that line), each exported method with its signature,
// and its type terms if it is a constraint.
func (w *writer) iface(head string, it *types.Interface) {
	var names []string
	unexported := false
	for i := range it.NumMethods() {
		m := it.Method(i)
		if !m.Exported() {
			unexported = true
			continue
		}
		names = append(names, m.Name())
		w.add("%s interface, %s%s", head, m.Name(), w.signature(m.Type().(*types.Signature)))
	}
	if unexported {
		names = append(names, "unexported methods")
	}
	set := strings.Join(names, ", ")
	if !it.IsMethodSet() {
		set = strings.TrimPrefix(w.typ(it), "interface")
	} else if set != "" {
		set = "{ " + set + " }"
	} else {
		set = "{}"
	}
	w.add("%s interface %s", head, set)
}

// typeParams writes a type parameter list, "[K comparable, V any]", or
// nothing.
func (w *writer) typeParams(tp *types.TypeParamList) string {
	if tp.Len() == 0 {
		return ""
	}
	var parts []string
	for i := range tp.Len() {
		p := tp.At(i)
		parts = append(parts, p.Obj().Name()+" "+w.typ(p.Constraint()))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// signature writes a signature without parameter names, such as
// "(context.Context, ...string) (*Client, error)".
func (w *writer) signature(s *types.Signature) string {
	var b strings.Builder
	b.WriteString("(")
	for i := range s.Params().Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := s.Params().At(i).Type()
		if s.Variadic() && i == s.Params().Len()-1 {
			if sl, ok := t.(*types.Slice); ok {
				b.WriteString("..." + w.typ(sl.Elem()))
				continue
			}
		}
		b.WriteString(w.typ(t))
	}
	b.WriteString(")")
	switch n := s.Results().Len(); n {
	case 0:
	case 1:
		b.WriteString(" " + w.typ(s.Results().At(0).Type()))
	default:
		b.WriteString(" (")
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(w.typ(s.Results().At(i).Type()))
		}
		b.WriteString(")")
	}
	return b.String()
}

// typ writes t as Go source would, with names of other packages qualified
// by import path, and func types without parameter names.
func (w *writer) typ(t types.Type) string {
	switch t := t.(type) {
	case *types.Basic:
		if t.Info()&types.IsUntyped != 0 {
			return strings.ReplaceAll(t.Name(), " ", "-") // untyped-string
		}
		return t.Name()
	case *types.Named:
		return w.objName(t.Obj()) + w.typeArgs(t.TypeArgs())
	case *types.Alias:
		return w.objName(t.Obj()) + w.typeArgs(t.TypeArgs())
	case *types.TypeParam:
		return t.Obj().Name()
	case *types.Pointer:
		return "*" + w.typ(t.Elem())
	case *types.Slice:
		return "[]" + w.typ(t.Elem())
	case *types.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), w.typ(t.Elem()))
	case *types.Map:
		return "map[" + w.typ(t.Key()) + "]" + w.typ(t.Elem())
	case *types.Chan:
		prefix := map[types.ChanDir]string{types.SendRecv: "chan ", types.SendOnly: "chan<- ", types.RecvOnly: "<-chan "}[t.Dir()]
		return prefix + w.typ(t.Elem())
	case *types.Signature:
		return "func" + w.signature(t)
	case *types.Struct:
		var parts []string
		for i := range t.NumFields() {
			f := t.Field(i)
			if f.Embedded() {
				parts = append(parts, w.typ(f.Type()))
			} else {
				parts = append(parts, f.Name()+" "+w.typ(f.Type()))
			}
		}
		if len(parts) == 0 {
			return "struct{}"
		}
		return "struct{ " + strings.Join(parts, "; ") + " }"
	case *types.Interface:
		var parts []string
		for i := range t.NumEmbeddeds() {
			parts = append(parts, w.typ(t.EmbeddedType(i)))
		}
		for i := range t.NumExplicitMethods() {
			m := t.ExplicitMethod(i)
			parts = append(parts, m.Name()+w.signature(m.Type().(*types.Signature)))
		}
		if len(parts) == 0 {
			if t.IsComparable() && !t.IsMethodSet() {
				return "comparable"
			}
			return "any"
		}
		return "interface{ " + strings.Join(parts, "; ") + " }"
	case *types.Union:
		var parts []string
		for i := range t.Len() {
			term := t.Term(i)
			s := w.typ(term.Type())
			if term.Tilde() {
				s = "~" + s
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " | ")
	case *types.Tuple:
		var parts []string
		for i := range t.Len() {
			parts = append(parts, w.typ(t.At(i).Type()))
		}
		return "(" + strings.Join(parts, ", ") + ")"
	default:
		return t.String()
	}
}

// objName writes a type's name, qualified by its package's import path
// unless it is the package's own or predeclared (error, any, comparable).
func (w *writer) objName(o *types.TypeName) string {
	if o.Pkg() == nil || o.Pkg() == w.pkg {
		return o.Name()
	}
	return o.Pkg().Path() + "." + o.Name()
}

func (w *writer) typeArgs(l *types.TypeList) string {
	if l.Len() == 0 {
		return ""
	}
	var parts []string
	for i := range l.Len() {
		parts = append(parts, w.typ(l.At(i)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
