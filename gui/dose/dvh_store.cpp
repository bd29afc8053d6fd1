#include "gui/dose/dvh_store.hpp"

#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/view_state.hpp"

namespace penumbra::gui {

const dvh::DvhResult* DoseSetDvhs::find(const QString& structure) const {
  const std::string name = structure.toStdString();
  for (const auto& r : results)
    if (r.structureName == name) return &r;
  return nullptr;
}

DvhStore::DvhStore(ViewState* state, DoseSetStore* doseSets, PlanModel* plan, JobRunner* jobs, QObject* parent)
    : QObject(parent), state_(state), doseSets_(doseSets), plan_(plan), jobs_(jobs) {
  connect(doseSets, &DoseSetStore::doseSetAdded, this, &DvhStore::recompute);
  connect(doseSets, &DoseSetStore::doseSetChanged, this, &DvhStore::recompute);
  connect(doseSets, &DoseSetStore::doseSetRemoved, this, &DvhStore::onRemoved);
  connect(state, &ViewState::sceneChanged, this, &DvhStore::onSceneChanged);
}

dvh::DvhOptions DvhStore::options(double prescriptionGy) {
  dvh::DvhOptions o;
  o.prescriptionGy = prescriptionGy;
  o.binWidthGy = 0.01;
  return o;
}

const DoseSetDvhs* DvhStore::forDoseSet(int doseSetId) const {
  const auto it = results_.find(doseSetId);
  return it == results_.end() ? nullptr : it->second.get();
}

bool DvhStore::isBusy() const {
  for (const auto& job : pending_)
    if (job && !job->isFinished()) return true;
  return false;
}

void DvhStore::recompute(int doseSetIndex) {
  const auto& scene = state_->scene();
  const std::shared_ptr<const DoseSet> set = doseSets_->at(doseSetIndex);
  if (!scene || !set) return;
  const int id = set->id;
  if (auto old = pending_.value(id)) old->cancel();  // an older version of this dose set
  results_.erase(id);
  auto patient = scene->sharedPatient();  // contours and masks as imported, patient mm
  auto out = std::make_shared<DoseSetDvhs>();
  out->doseSetId = id;
  out->prescriptionGy = plan_->prescriptionGy();
  const dvh::DvhOptions opts = options(out->prescriptionGy);
  auto work = [patient, set, out, opts](const JobControl& jc) {
    std::vector<const Structure*> todo;
    for (const auto& s : patient->structures.structures)
      if (!s.contours.empty() || !s.mask.empty()) todo.push_back(&s);
    for (std::size_t i = 0; i < todo.size(); ++i) {
      jc.checkCancel();
      jc.report(double(i) / double(todo.size()), "DVH " + todo[i]->name);
      try {
        // Same call as a test's reference: computeDvh picks contours, else the mask.
        out->results.push_back(dvh::computeDvh(*todo[i], set->dose, opts, JobControl{nullptr, jc.cancel}));
        for (const auto& w : out->results.back().warnings)
          out->warnings.push_back(QString::fromStdString(todo[i]->name + ": " + w));
      } catch (const CancelledError&) {
        throw;
      } catch (const std::exception& e) {
        // One unusable ROI (e.g. point-only contours) must not hide the others.
        out->warnings.push_back(QString::fromStdString(todo[i]->name + ": no DVH (" + e.what() + ")"));
      }
    }
    jc.report(1.0, "DVH done");
  };
  const QString title = tr("DVHs of %1").arg(set->name);
  Job* job = set->live ? jobs_->submitBeside(title, work) : jobs_->submit(title, work);
  pending_.insert(id, job);
  emit computeStarted(id);
  const std::weak_ptr<const Patient> forPatient = patient;
  connect(job, &Job::succeeded, this, [this, id, set, out, forPatient] {
    // Dropped when the patient changed or the dose set was replaced or removed meanwhile.
    const auto& scene = state_->scene();
    if (!scene || scene->sharedPatient() != forPatient.lock()) return;
    if (doseSets_->at(doseSets_->indexOfId(id)) != set) return;
    for (const auto& w : out->warnings) emit message(tr("DVH: %1").arg(w));
    results_[id] = out;
    emit dvhsChanged(id);
  });
  connect(job, &Job::failed, this, [this, job] {
    emit message(tr("DVH computation failed: %1").arg(job->errorMessage()));
  });
  connect(job, &Job::finished, this, [this, id, job] {
    if (pending_.value(id) == job) pending_.remove(id);
  });
}

void DvhStore::onRemoved() {
  for (auto it = results_.begin(); it != results_.end();) {
    if (doseSets_->indexOfId(it->first) < 0) {
      const int id = it->first;
      it = results_.erase(it);
      emit dvhsChanged(id);
    } else {
      ++it;
    }
  }
}

void DvhStore::onSceneChanged() {
  for (const auto& job : pending_)
    if (job) job->cancel();
  pending_.clear();
  results_.clear();
  emit cleared();
}

}  // namespace penumbra::gui
