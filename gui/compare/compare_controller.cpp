#include "gui/compare/compare_controller.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gui/jobs/job_runner.hpp"
#include "gui/model/comparison_model.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/view_state.hpp"
#include "gui/overlays/dose_clip.hpp"

namespace penumbra::gui {

namespace {

/// The patient's structures with a mask, on the reference grid: the mask itself when it is
/// on that grid already (a dose-only patient: masks are made on the dose grid), else resampled
/// at the reference voxel centres (nearest voxel, dose_clip.hpp). Structures with no voxel on
/// the reference grid are left out (the engine would have nothing to report for them).
std::vector<compare::StructureMask> structuresOnGrid(const std::shared_ptr<const Patient>& patient,
                                                     const Grid& grid, const JobControl& jc) {
  std::vector<compare::StructureMask> out;
  for (const Structure& s : patient->structures.structures) {
    jc.checkCancel();
    if (s.mask.empty()) continue;
    std::shared_ptr<const Mask> mask;
    if (s.mask.grid.dims == grid.dims && s.mask.grid.sameGeometry(grid))
      mask = std::shared_ptr<const Mask>(patient, &s.mask);  // aliasing: no copy
    else
      mask = std::make_shared<const Mask>(maskOnGrid(s.mask, grid));
    if (std::none_of(mask->data.begin(), mask->data.end(), [](std::uint8_t v) { return v != 0; })) continue;
    out.push_back({s.name, std::move(mask)});
  }
  return out;
}

}  // namespace

QString groupedCount(long long n) {
  QString digits = QString::number(std::llabs(n));
  for (int i = int(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ' ');
  return n < 0 ? "-" + digits : digits;
}

QString passRateHeadline(const compare::GammaCriteria& criteria, const compare::CompareResult& result) {
  const auto& g = result.gammaStats;
  if (g.evaluatedPoints == 0)
    return QObject::tr("%1: no point evaluated (all below the %2 % cut-off or outside B)")
        .arg(ComparisonModel::criteriaText(criteria))
        .arg(criteria.cutoffPercent, 0, 'g', 3);
  return QObject::tr("%1: %2 % pass (%3 points)")
      .arg(ComparisonModel::criteriaText(criteria))
      .arg(g.passRatePercent, 0, 'f', 1)
      .arg(groupedCount(g.evaluatedPoints));
}

CompareController::CompareController(ViewState* state, DoseSetStore* doseSets, JobRunner* jobs,
                                     ComparisonModel* model, QObject* parent)
    : QObject(parent), state_(state), doseSets_(doseSets), jobs_(jobs), model_(model) {
  // A comparison belongs to its patient and its two dose sets.
  connect(state, &ViewState::sceneChanged, this, [this] {
    cancel();
    model_->clear();
  });
  connect(doseSets, &DoseSetStore::doseSetRemoved, this, [this] {
    const auto c = model_->current();
    if (c && (doseSets_->indexOfId(c->reference->id) < 0 || doseSets_->indexOfId(c->evaluated->id) < 0))
      model_->clear();
  });
}

Job* CompareController::activeJob() const { return job_.data(); }

bool CompareController::isRunning() const { return job_ && !job_->isFinished(); }

void CompareController::cancel() {
  if (job_) job_->cancel();
}

Job* CompareController::compute(const CompareSettings& settings) {
  last_ = settings;
  const auto& scene = state_->scene();
  const auto a = doseSets_->at(doseSets_->indexOfId(settings.referenceId));
  const auto b = doseSets_->at(doseSets_->indexOfId(settings.evaluatedId));
  QString why;
  if (!scene) why = tr("no patient is open");
  else if (!a || !b) why = tr("choose two dose sets (A and B)");
  else if (isRunning()) why = tr("a comparison is already running");
  if (!why.isEmpty()) {
    emit finished(false, why);
    return nullptr;
  }
  auto request = std::make_shared<compare::CompareRequest>();
  // Aliasing pointers: the request keeps the dose sets alive without copying their voxels.
  request->reference = std::shared_ptr<const Volume<float>>(a, &a->dose.dose);
  request->evaluated = std::shared_ptr<const Volume<float>>(b, &b->dose.dose);
  request->criteria = settings.criteria;
  request->backend = settings.backend;
  auto result = std::make_shared<compare::CompareResult>();
  const std::shared_ptr<const Patient> patient = settings.perStructure ? scene->sharedPatient() : nullptr;
  auto work = [request, result, patient](const JobControl& jc) {
    if (patient) {
      jc.report(0, "structures on the reference grid");
      request->structures = structuresOnGrid(patient, request->reference->grid, jc);
    }
    *result = compare::compareDoses(*request, jc);
  };
  const QString title = tr("Compare %1 (A) with %2 (B)").arg(a->name, b->name);
  Job* job = jobs_->submit(title, work);
  job_ = job;
  auto comparison = std::make_shared<Comparison>();
  comparison->reference = a;
  comparison->evaluated = b;
  comparison->criteria = settings.criteria;
  comparison->patientName = QString::fromStdString(scene->patient().name);
  const std::weak_ptr<const Patient> forPatient = scene->sharedPatient();
  connect(job, &Job::succeeded, this, [this, result, comparison, forPatient] {
    const auto& now = state_->scene();
    if (!now || now->sharedPatient() != forPatient.lock())
      return emit finished(false, tr("The patient changed while the comparison ran."));
    for (const auto& m : result->messages) emit message(tr("Compare: %1").arg(QString::fromStdString(m)));
    comparison->result = result;
    model_->setCurrent(comparison);
    emit finished(true, passRateHeadline(comparison->criteria, *result));
  });
  connect(job, &Job::failed, this, [this](const QString& error) {
    emit message(tr("Comparison failed: %1").arg(error));
    emit finished(false, error);
  });
  connect(job, &Job::cancelled, this, [this] { emit finished(false, tr("Comparison cancelled.")); });
  emit started(job);
  return job;
}

}  // namespace penumbra::gui
