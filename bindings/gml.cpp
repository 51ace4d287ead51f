// nanobind binding of the GML fast path (cpp/include/tpcstudy/gml.hpp): the tree as the nested
// lists of (key, value, line) tuples tpcstudy.io.gml.parse_gml gives. Type conversion only.
#include <nanobind/nanobind.h>

#include <string>
#include <unordered_map>

#include "tpcstudy/gml.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

struct Converter {
    const tpc::gml::Tree& tree;
    PyObject* unescape;  // html.unescape, for strings with an '&'
    std::unordered_map<std::string_view, PyObject*> keys;  // one str object per distinct key

    ~Converter() {
        for (auto& kv : keys) Py_DECREF(kv.second);
    }

    PyObject* key(std::string_view k) {
        auto it = keys.find(k);
        if (it != keys.end()) {
            Py_INCREF(it->second);
            return it->second;
        }
        PyObject* s = PyUnicode_FromStringAndSize(k.data(), static_cast<Py_ssize_t>(k.size()));
        if (!s) return nullptr;
        Py_INCREF(s);
        keys.emplace(k, s);
        return s;
    }

    PyObject* value(const tpc::gml::Entry& e) {
        using tpc::gml::Kind;
        switch (e.kind) {
            case Kind::Int: return PyLong_FromLongLong(e.i);
            case Kind::Float: return PyFloat_FromDouble(e.f);
            case Kind::List: return list(e.list);
            case Kind::Str: {
                PyObject* s = PyUnicode_DecodeUTF8(e.str.data(), static_cast<Py_ssize_t>(e.str.size()),
                                                   "strict");
                if (!s || e.str.find('&') == std::string_view::npos) return s;
                PyObject* u = PyObject_CallOneArg(unescape, s);
                Py_DECREF(s);
                return u;
            }
        }
        return nullptr;
    }

    PyObject* list(int32_t id) {
        const auto& items = tree.lists[static_cast<size_t>(id)];
        PyObject* out = PyList_New(static_cast<Py_ssize_t>(items.size()));
        if (!out) return nullptr;
        for (size_t i = 0; i < items.size(); ++i) {
            const tpc::gml::Entry& e = tree.entries[static_cast<size_t>(items[i])];
            PyObject* k = key(e.key);
            PyObject* v = k ? value(e) : nullptr;
            PyObject* ln = v ? PyLong_FromLong(e.line) : nullptr;
            if (!ln) {
                Py_XDECREF(k);
                Py_XDECREF(v);
                Py_DECREF(out);
                return nullptr;
            }
            PyObject* t = PyTuple_New(3);
            if (!t) {
                Py_DECREF(k);
                Py_DECREF(v);
                Py_DECREF(ln);
                Py_DECREF(out);
                return nullptr;
            }
            PyTuple_SET_ITEM(t, 0, k);
            PyTuple_SET_ITEM(t, 1, v);
            PyTuple_SET_ITEM(t, 2, ln);
            PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), t);
        }
        return out;
    }
};

}  // namespace

void bind_gml(nb::module_& m) {
    m.def("parse_gml",
          [](nb::str text, nb::object unescape) -> nb::object {
              Py_ssize_t size = 0;
              const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
              if (!data) throw nb::python_error();
              std::optional<tpc::gml::Tree> tree;
              {
                  nb::gil_scoped_release release;  // the text is immutable, its UTF-8 cached
                  tree = tpc::gml::parse(std::string_view(data, static_cast<size_t>(size)));
              }
              if (!tree) return nb::none();
              Converter conv{*tree, unescape.ptr(), {}};
              PyObject* out = conv.list(0);
              if (!out) throw nb::python_error();
              return nb::steal(out);
          },
          "text"_a, "unescape"_a,
          "GML text as nested lists of (key, value, line), or None where tpcstudy.io.gml's "
          "Python parser must read it (malformed or unusual: cpp/include/tpcstudy/gml.hpp).");
}
