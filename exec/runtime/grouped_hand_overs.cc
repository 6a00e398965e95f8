#include "exec/runtime/grouped_hand_overs.h"

#include <stdexcept>
#include <utility>

namespace splitbrain::exec {

// A posted group, shared by the operations of its sends: waited for once, whoever asks first.
struct GroupedHandOvers::Group {
  std::unique_ptr<comm::PendingCollective> pending;  // null until posted
  bool done = false;

  bool test() {
    if (!done && pending != nullptr && pending->test()) done = true;
    return done;
  }
  void wait() {
    if (done) return;
    if (pending == nullptr) throw std::logic_error("pipeline: a hand-over group waited for before it was posted");
    pending->wait();
    done = true;
  }
};

// A held-back send: not complete before its group is posted; waiting for it posts the group.
class GroupedHandOvers::HeldSend final : public comm::PendingCollective {
 public:
  HeldSend(GroupedHandOvers& owner, std::shared_ptr<Group> group) : owner_(owner), group_(std::move(group)) {}
  bool test() override { return group_->test(); }
  void wait() override {
    if (group_->pending == nullptr) owner_.flush();
    group_->wait();
  }

 private:
  GroupedHandOvers& owner_;
  std::shared_ptr<Group> group_;
};

void GroupedHandOvers::hold(comm::CollectiveEngine& engine, const std::vector<int>& axes, HandOver message) {
  // A group's messages travel in one group of the transport, so in one communicator.
  if (!held_.empty() && (engine_ != &engine || axes_ != axes)) flush();
  engine_ = &engine;
  axes_ = axes;
  held_.push_back(message);
  if (open_ == nullptr) open_ = std::make_shared<Group>();
}

std::unique_ptr<comm::PendingCollective> GroupedHandOvers::start_send(comm::CollectiveEngine& engine,
                                                                      const std::vector<int>& axes, int peer,
                                                                      const DeviceArray& array) {
  hold(engine, axes, {.send = &array, .receive = nullptr, .peer = peer});
  return std::make_unique<HeldSend>(*this, open_);
}

void GroupedHandOvers::receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int peer,
                               DeviceArray& into) {
  hold(engine, axes, {.send = nullptr, .receive = &into, .peer = peer});
  const std::shared_ptr<Group> group = open_;
  flush();
  group->wait();
}

void GroupedHandOvers::hold_receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int peer,
                                    DeviceArray& into) {
  hold(engine, axes, {.send = nullptr, .receive = &into, .peer = peer});
}

void GroupedHandOvers::flush() {
  if (held_.empty()) return;
  // Taken out first: a transport that throws leaves nothing held that points at freed arrays.
  const std::vector<HandOver> group = std::exchange(held_, {});
  const std::shared_ptr<Group> posted = std::exchange(open_, nullptr);
  posted->pending = transport_.post(*engine_, axes_, group);
}

}  // namespace splitbrain::exec
