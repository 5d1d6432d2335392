// The C++ magics inside IPython: each becomes an IPython magic function; the host they see
// publishes through the host's publisher and checks Python's signal flag for interrupts.
#include "xwarp/fronts/ipython/magic_bridge.hpp"

#include <climits>
#include <set>
#include <cstdlib>

#include <unistd.h>

#include <pybind11/eval.h>

namespace py = pybind11;

namespace xwarp
{
    namespace
    {
        // JSON into Python through its own json module: the bundles are small, and it keeps the
        // extension module free of a JSON-binding dependency.
        py::object to_python(const nlohmann::json& j)
        {
            return py::module_::import("json").attr("loads")(
                j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        }

        // The object -o VAR binds: the JSON report as a dict, rendered as HTML in notebooks.
        // Kept alive for the kernel's life (never released at exit, when the GIL is not held).
        py::object& report_class()
        {
            static py::object* cls = []
            {
                py::dict scope;
                py::exec(R"(
class WarpProbeReport(dict):
    """A warp-probe report: dict access to the JSON report; shows as HTML in notebooks."""

    def __init__(self, data, html):
        super().__init__(data)
        self._html = html

    def _repr_html_(self):
        return self._html
)",
                         scope);
                return new py::object(scope["WarpProbeReport"]);
            }();
            return *cls;
        }

        // What a magic's bad options raise: an error (the execute reply says "error", so Run
        // All stops there, as xeus-cling's magics do), shown as the usage text alone.
        py::object& usage_error_class()
        {
            static py::object* cls = []
            {
                py::dict scope;
                py::exec(R"(
class WarpProbeUsageError(Exception):
    """A %%warp_probe magic was given options it cannot use; the message is its usage."""

    def _render_traceback_(self):
        return ["WarpProbeUsageError: " + str(self)]
)",
                         scope);
                return new py::object(scope["WarpProbeUsageError"]);
            }();
            return *cls;
        }

        // What --strict raises when --expect is not met: an AssertionError, so an exercise cell
        // fails the way a failed check does.
        py::object& expectation_error_class()
        {
            static py::object* cls = []
            {
                py::dict scope;
                py::exec(R"(
class WarpProbeExpectationNotMet(AssertionError):
    """%%warp_probe --strict: the run did not meet its --expect."""

    def _render_traceback_(self):
        return ["WarpProbeExpectationNotMet: " + str(self)]
)",
                         scope);
                return new py::object(scope["WarpProbeExpectationNotMet"]);
            }();
            return *cls;
        }

        // What a probe whose program failed in every sample raises: a RuntimeError, as the
        // program's own failure would have been.
        py::object& program_failed_class()
        {
            static py::object* cls = []
            {
                py::dict scope;
                py::exec(R"(
class WarpProbeProgramFailed(RuntimeError):
    """%%warp_probe: the probed program failed in every sample (see the report above)."""

    def _render_traceback_(self):
        return ["WarpProbeProgramFailed: " + str(self)]
)",
                         scope);
                return new py::object(scope["WarpProbeProgramFailed"]);
            }();
            return *cls;
        }

        class ipython_host : public magic_host
        {
        public:
            ipython_host(py::object shell, display_publisher publish) : m_shell(std::move(shell)), m_publish(std::move(publish))
            {
            }

            std::string working_directory() override
            {
                char buf[PATH_MAX];
                return ::getcwd(buf, sizeof buf) ? std::string(buf) : std::string(".");
            }

            std::string python_executable() override
            {
                py::gil_scoped_acquire gil;
                return py::module_::import("sys").attr("executable").cast<std::string>();
            }

            // The magic runs on the thread that runs cells, where Python's SIGINT handler flags an
            // interrupt (the xwarp kernel opens a SIGINT window for the cell; ipykernel runs
            // cells on the main thread); checking the flag leaves KeyboardInterrupt set.
            bool interrupt_requested() override
            {
                py::gil_scoped_acquire gil;
                return PyErr_CheckSignals() != 0;
            }

            void show(const nlohmann::json& bundle, const std::string& display_id, bool update) override
            {
                m_publish(bundle, display_id, update);
            }

            void bind_variable(const std::string& name, const nlohmann::json& report, const std::string& html) override
            {
                py::gil_scoped_acquire gil;
                py::object value = report_class()(to_python(report), html);
                m_shell.attr("user_ns")[py::str(name)] = value;
            }

        private:
            py::object m_shell;
            display_publisher m_publish;
        };

        // Runs a magic with the GIL released and turns its outcomes into Python's.
        template <class F>
        void call_magic(F&& run)
        {
            try
            {
                py::gil_scoped_release release;
                run();
            }
            catch (const magic_interrupted&)
            {
                if (!PyErr_Occurred())
                {
                    PyErr_SetNone(PyExc_KeyboardInterrupt);
                }
                throw py::error_already_set();
            }
            catch (const magic_program_failed& e)
            {
                PyErr_SetString(program_failed_class().ptr(), e.what());
                throw py::error_already_set();
            }
            catch (const magic_expectation_not_met& e)
            {
                PyErr_SetString(expectation_error_class().ptr(), e.what());
                throw py::error_already_set();
            }
            catch (const magic_error& e)
            {
                PyErr_SetString(usage_error_class().ptr(), e.what());
                throw py::error_already_set();
            }
        }
    }

    display_publisher ipython_display_publisher()
    {
        return [](const nlohmann::json& bundle, const std::string& display_id, bool update)
        {
            py::gil_scoped_acquire gil;
            // After an interrupt, KeyboardInterrupt is already set (the magic is finishing up
            // to raise it): put it aside while Python runs the display, then back.
            py::error_scope pending;
            py::module_ display = py::module_::import("IPython.display");
            py::object data = to_python(bundle);
            if (display_id.empty())
            {
                display.attr("display")(data, py::arg("raw") = true);
            }
            else if (update)
            {
                display.attr("update_display")(data, py::arg("raw") = true, py::arg("display_id") = display_id);
            }
            else
            {
                display.attr("display")(data, py::arg("raw") = true, py::arg("display_id") = display_id);
            }
        };
    }

    void register_magics_with_ipython(py::object shell, std::shared_ptr<magic_registry> magics, display_publisher publish)
    {
        std::set<std::string> names;
        for (const auto& [name, m] : magics->line_magics())
        {
            names.insert(name);
        }
        for (const auto& [name, m] : magics->cell_magics())
        {
            names.insert(name);
        }
        for (const auto& name : names)
        {
            auto line_it = magics->line_magics().find(name);
            auto cell_it = magics->cell_magics().find(name);
            std::shared_ptr<line_magic> as_line = line_it == magics->line_magics().end() ? nullptr : line_it->second;
            std::shared_ptr<cell_magic> as_cell = cell_it == magics->cell_magics().end() ? nullptr : cell_it->second;
            const char* kind = as_line && as_cell ? "line_cell" : (as_cell ? "cell" : "line");
            py::cpp_function fn(
                [shell, as_line, as_cell, name, publish](const std::string& line, py::object cell)
                {
                    ipython_host host(shell, publish);
                    if (!cell.is_none() && as_cell)
                    {
                        std::string code = cell.cast<std::string>();
                        call_magic([&] { as_cell->run(line, code, host); });
                    }
                    else if (as_line)
                    {
                        call_magic([&] { as_line->run(line, host); });
                    }
                    else
                    {
                        PyErr_SetString(usage_error_class().ptr(), ("%%" + name + " is a cell magic").c_str());
                        throw py::error_already_set();
                    }
                },
                py::arg("line"),
                py::arg("cell") = py::none(),
                py::name(name.c_str()),
                py::doc(("xwarp magic %" + name + ": run it with --help for its options").c_str()));
            shell.attr("register_magic_function")(fn, kind, name);
        }
    }
}
